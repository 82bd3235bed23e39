//! The namespace: directories and files as a tree of inodes numbered from [`ROOT_INO`], children
//! kept in name (byte) order, so a walk is what `find` prints on a file system whose directories
//! list their entries sorted.

use crate::host::Ino;

/// The root directory's inode number in a [`Tree`] (0 is the block device's, `BDEV_INO`).
pub const ROOT_INO: Ino = 1;

/// The most entries (files and directories, the root included) a tree may hold.
pub const MAX_ENTRIES: usize = 10_000_000;

/// The longest name a directory entry may have (ext2's and FFS's `MAXNAMLEN`).
pub const MAX_NAME_BYTES: usize = 255;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Dir,
    File,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The entry's name in its parent ("" for the root).
    pub name: String,
    /// The parent directory (the root is its own parent).
    pub parent: Ino,
    pub kind: Kind,
    /// A file's length in bytes (0 for directories: their size is the layout's business).
    pub size_bytes: u64,
    /// Entries of a directory, in name (byte) order.
    pub children: Vec<Ino>,
}

/// Files and directories. Inode `i` is `nodes[i]`; `nodes[0]` stands for the block device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    nodes: Vec<Node>,
    /// Entries removed ([`Tree::remove`]): their slots stay (inode numbers are not reused),
    /// marked by parent 0.
    removed: usize,
}

impl Default for Tree {
    fn default() -> Self {
        Self::new()
    }
}

impl Tree {
    /// A tree holding only the root directory.
    pub fn new() -> Self {
        let placeholder = Node { name: String::new(), parent: 0, kind: Kind::File, size_bytes: 0, children: Vec::new() };
        let root = Node { name: String::new(), parent: ROOT_INO, kind: Kind::Dir, size_bytes: 0, children: Vec::new() };
        Tree { nodes: vec![placeholder, root], removed: 0 }
    }

    /// The node of `ino`. Panics if `ino` is not in the tree.
    pub fn node(&self, ino: Ino) -> &Node {
        assert!(self.contains(ino), "inode {ino} is not in the tree");
        &self.nodes[ino as usize]
    }

    pub fn contains(&self, ino: Ino) -> bool {
        ino >= ROOT_INO && (ino as usize) < self.nodes.len() && self.nodes[ino as usize].parent != 0
    }

    /// One past the highest inode number (inodes are `ROOT_INO..end_ino()`).
    pub fn end_ino(&self) -> Ino {
        self.nodes.len() as Ino
    }

    /// Entries, the root included (removed ones not counted).
    pub fn len(&self) -> usize {
        self.nodes.len() - 1 - self.removed
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn files(&self) -> usize {
        self.nodes[1..].iter().filter(|n| n.kind == Kind::File && n.parent != 0).count()
    }

    /// Directories, the root included.
    pub fn dirs(&self) -> usize {
        self.nodes[1..].iter().filter(|n| n.kind == Kind::Dir && n.parent != 0).count()
    }

    /// The sum of the files' sizes (saturating).
    pub fn total_bytes(&self) -> u64 {
        self.nodes[1..].iter().fold(0u64, |s, n| s.saturating_add(n.size_bytes))
    }

    /// The child of directory `dir` named `name`.
    pub fn child(&self, dir: Ino, name: &str) -> Option<Ino> {
        let d = self.node(dir);
        d.children.binary_search_by(|&c| self.nodes[c as usize].name.as_str().cmp(name)).ok().map(|i| d.children[i])
    }

    /// The inode at `path`: components separated by `/`, relative to the root (`""`, `"."` and
    /// `"/"` are the root; `.` components and repeated slashes are ignored; `..` is not).
    pub fn lookup(&self, path: &str) -> Option<Ino> {
        let mut at = ROOT_INO;
        for c in path.split('/') {
            if c.is_empty() || c == "." {
                continue;
            }
            if self.node(at).kind != Kind::Dir {
                return None;
            }
            at = self.child(at, c)?;
        }
        Some(at)
    }

    /// The path of `ino` as `find .` prints it (`.` for the root, `./a/b` below it).
    pub fn path_of(&self, ino: Ino) -> String {
        let mut parts = Vec::new();
        let mut at = ino;
        while at != ROOT_INO {
            let n = self.node(at);
            parts.push(n.name.as_str());
            at = n.parent;
        }
        let mut s = String::from(".");
        for p in parts.iter().rev() {
            s.push('/');
            s.push_str(p);
        }
        s
    }

    /// Depth of `ino` (the root: 0).
    pub fn depth_of(&self, ino: Ino) -> u32 {
        let mut d = 0;
        let mut at = ino;
        while at != ROOT_INO {
            at = self.node(at).parent;
            d += 1;
        }
        d
    }

    /// Every inode in `find` order: pre-order, a directory before its entries, entries in name
    /// order.
    pub fn walk(&self) -> Vec<Ino> {
        let mut out = Vec::with_capacity(self.len());
        let mut stack = vec![ROOT_INO];
        while let Some(i) = stack.pop() {
            out.push(i);
            stack.extend(self.nodes[i as usize].children.iter().rev());
        }
        out
    }

    /// Adds an entry `name` of `kind` to directory `parent`; returns its inode number (the next
    /// free one). A file's size is `size_bytes`; a directory's is 0 whatever is given.
    pub fn add(&mut self, parent: Ino, name: &str, kind: Kind, size_bytes: u64) -> Result<Ino, String> {
        check_name(name)?;
        if !self.contains(parent) {
            return Err(format!("no inode {parent} in the tree"));
        }
        if self.nodes[parent as usize].kind != Kind::Dir {
            return Err(format!("`{}` is not a directory", self.path_of(parent)));
        }
        if self.len() >= MAX_ENTRIES {
            return Err(format!("the tree already holds {MAX_ENTRIES} entries (the limit)"));
        }
        if self.nodes.len() >= Ino::MAX as usize {
            return Err("the tree has used every inode number".into());
        }
        let ino = self.nodes.len() as Ino;
        let pos = {
            let nodes = &self.nodes;
            match nodes[parent as usize].children.binary_search_by(|&c| nodes[c as usize].name.as_str().cmp(name)) {
                Ok(_) => return Err(format!("`{}/{name}` already exists", self.path_of(parent))),
                Err(p) => p,
            }
        };
        let size_bytes = if kind == Kind::Dir { 0 } else { size_bytes };
        self.nodes.push(Node { name: name.to_string(), parent, kind, size_bytes, children: Vec::new() });
        self.nodes[parent as usize].children.insert(pos, ino);
        Ok(ino)
    }

    /// Sets a file's size (a write past its end, a truncate). Directories are refused.
    pub fn set_size(&mut self, ino: Ino, size_bytes: u64) -> Result<(), String> {
        if !self.contains(ino) || self.nodes[ino as usize].kind != Kind::File {
            return Err(format!("inode {ino} is not a file of the tree"));
        }
        self.nodes[ino as usize].size_bytes = size_bytes;
        Ok(())
    }

    /// Removes file `ino` from its directory (unlink). Its inode number is not reused: later
    /// entries get new ones. Directories and the root are refused.
    pub fn remove(&mut self, ino: Ino) -> Result<(), String> {
        if !self.contains(ino) {
            return Err(format!("no inode {ino} in the tree"));
        }
        if self.nodes[ino as usize].kind != Kind::File {
            return Err(format!("`{}` is a directory (only files are removed)", self.path_of(ino)));
        }
        let parent = self.nodes[ino as usize].parent;
        self.nodes[parent as usize].children.retain(|&c| c != ino);
        let n = &mut self.nodes[ino as usize];
        n.parent = 0;
        n.size_bytes = 0;
        n.name = String::new();
        self.removed += 1;
        Ok(())
    }

    /// Removes `ino` if it is the last inode added and has no entries (undoing a failed
    /// creation).
    pub(crate) fn remove_last(&mut self, ino: Ino) {
        if ino as usize + 1 != self.nodes.len() || !self.nodes[ino as usize].children.is_empty() {
            return;
        }
        let n = self.nodes.pop().expect("the tree holds the inode");
        self.nodes[n.parent as usize].children.retain(|&c| c != ino);
    }

    /// Builds a tree from nodes in arbitrary numbering, renumbering in walk order. `nodes[0]` is
    /// ignored, `nodes[1]` is the root; children need not be sorted.
    pub(crate) fn from_unordered(mut nodes: Vec<Node>) -> Tree {
        for i in 1..nodes.len() {
            let mut ch = std::mem::take(&mut nodes[i].children);
            ch.sort_by(|&a, &b| nodes[a as usize].name.cmp(&nodes[b as usize].name));
            nodes[i].children = ch;
        }
        let staged = Tree { nodes, removed: 0 };
        let order = staged.walk();
        let mut new_ino = vec![0 as Ino; staged.nodes.len()];
        for (k, &old) in order.iter().enumerate() {
            new_ino[old as usize] = k as Ino + ROOT_INO;
        }
        let mut old_nodes = staged.nodes;
        let mut out = Tree::new();
        out.nodes.reserve(order.len());
        for &old in &order {
            let mut n = std::mem::replace(
                &mut old_nodes[old as usize],
                Node { name: String::new(), parent: 0, kind: Kind::File, size_bytes: 0, children: Vec::new() },
            );
            n.parent = new_ino[n.parent as usize];
            for c in n.children.iter_mut() {
                *c = new_ino[*c as usize];
            }
            if old == ROOT_INO {
                n.name.clear();
                n.parent = ROOT_INO;
                out.nodes[ROOT_INO as usize] = n;
            } else {
                out.nodes.push(n);
            }
        }
        out
    }
}

/// A name a directory may hold: not empty, no `/` or NUL, not `.` or `..`, at most 255 bytes.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("an empty name".into());
    }
    if name == "." || name == ".." {
        return Err(format!("the name `{name}` is reserved"));
    }
    if name.contains('/') || name.contains('\0') {
        return Err(format!("the name `{}` holds a `/` or a NUL", crate::input::escape_controls(name)));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!("a name of {} bytes (the most is {MAX_NAME_BYTES})", name.len()));
    }
    Ok(())
}
