//! What the host and the commands ask of a [`Tree`] beyond its core: short accessors, and
//! building a namespace from several sources (files at paths, subtrees grafted under a path).

use super::tree::{Kind, Tree, ROOT_INO};
use crate::host::Ino;

impl Tree {
    /// The parent directory (None for the root).
    pub fn parent(&self, ino: Ino) -> Option<Ino> {
        (ino != ROOT_INO).then(|| self.node(ino).parent)
    }

    /// A file's length in bytes (0 for a directory).
    pub fn size(&self, ino: Ino) -> u64 {
        self.node(ino).size_bytes
    }

    pub fn is_dir(&self, ino: Ino) -> bool {
        self.node(ino).kind == Kind::Dir
    }

    pub fn children(&self, dir: Ino) -> &[Ino] {
        &self.node(dir).children
    }

    pub fn name(&self, ino: Ino) -> &str {
        &self.node(ino).name
    }

    /// The directory at absolute `path`, created with its missing parents (`mkdir -p`).
    pub fn make_dirs(&mut self, path: &str) -> Result<Ino, String> {
        let mut at = ROOT_INO;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            at = match self.child(at, part) {
                Some(c) if self.is_dir(c) => c,
                Some(_) => return Err(format!("`{path}`: `{part}` is a file, not a directory")),
                None => self.add(at, part, Kind::Dir, 0)?,
            };
        }
        Ok(at)
    }

    /// A regular file of `size_bytes` at absolute `path` (its directories created).
    pub fn add_file(&mut self, path: &str, size_bytes: u64) -> Result<Ino, String> {
        let trimmed = path.trim_end_matches('/');
        let (dir, name) = match trimmed.rsplit_once('/') {
            Some((d, n)) if !n.is_empty() => (d, n),
            _ => return Err(format!("`{path}`: give an absolute path to a file, such as /data/big")),
        };
        let parent = self.make_dirs(dir)?;
        if self.child(parent, name).is_some() {
            return Err(format!("`{path}` exists already"));
        }
        self.add(parent, name, Kind::File, size_bytes)
    }

    /// `sub`'s contents placed under the directory at absolute `path` (created; it must not
    /// hold entries of the same names).
    pub fn graft(&mut self, path: &str, sub: &Tree) -> Result<(), String> {
        let at = self.make_dirs(path)?;
        self.copy_children(sub, ROOT_INO, at)
    }

    fn copy_children(&mut self, sub: &Tree, from: Ino, to: Ino) -> Result<(), String> {
        for &c in sub.children(from) {
            let n = sub.node(c);
            if self.child(to, &n.name).is_some() {
                return Err(format!("`{}` exists already", self.path_of(to).trim_end_matches('/').to_string() + "/" + &n.name));
            }
            let copied = self.add(to, &n.name, n.kind, n.size_bytes)?;
            if n.kind == Kind::Dir {
                self.copy_children(sub, c, copied)?;
            }
        }
        Ok(())
    }
}
