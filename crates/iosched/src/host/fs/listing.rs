//! A tree from a real file system's listing, as `find . -printf '%s %p\n'` prints it: the size
//! in bytes, one space, the path (the rest of the line, spaces included). `.` is the root;
//! directories appear as lines too (their sizes are ignored); a path whose parents were not
//! listed gets them created. An entry something else is listed below is a directory; any other
//! is a file (so an empty directory reads as a file of its listed size; `find . -printf '%y %s
//! %p\n'`, with a type letter first, says which is which).

use super::tree::{check_name, Kind, Node, Tree, MAX_ENTRIES, ROOT_INO};
use crate::host::Ino;
use crate::input::escape_controls;
use std::collections::HashMap;
use std::path::Path;

/// The largest listing file read: 2 GiB (10 million entries of about 200 bytes).
pub const MAX_LISTING_BYTES: u64 = 2 << 30;
/// The largest size a listing may give a file: 2^50 bytes (1 PiB).
pub const MAX_LISTED_BYTES: u64 = 1 << 50;

/// Reads and parses the listing at `path`; errors name the file (and the line).
pub fn read_listing(path: &Path) -> Result<Tree, String> {
    let origin = path.display().to_string();
    let text = crate::input::read_text(path, MAX_LISTING_BYTES).map_err(|e| match e.line() {
        0 => format!("{origin}: {e}"),
        l => format!("{origin}:{l}: {e}"),
    })?;
    parse_listing(&text, &origin)
}

/// Parses a listing; `origin` names it in errors (`tree.txt:17: ...`).
pub fn parse_listing(text: &str, origin: &str) -> Result<Tree, String> {
    let blank = || Node { name: String::new(), parent: ROOT_INO, kind: Kind::File, size_bytes: 0, children: Vec::new() };
    let mut nodes: Vec<Node> = vec![blank(), Node { kind: Kind::Dir, ..blank() }];
    // Was the entry on a line of its own (a second line for it is a duplicate)? Did that line
    // give its type?
    let mut listed: Vec<bool> = vec![false, false];
    let mut typed: Vec<Option<Kind>> = vec![None, Some(Kind::Dir)];
    // Lookups only: never iterated, so the result does not depend on its order.
    let mut index: HashMap<(Ino, String), Ino> = HashMap::new();
    for (n, raw) in text.split('\n').enumerate() {
        let line_no = n + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        let err = |what: String| format!("{origin}:{line_no}: {what}");
        let quoted = || escape_controls(if line.len() > 200 { &line[..line.floor_char_boundary_compat(200)] } else { line });
        let (kind, size, path) = split_line(line).ok_or_else(|| err(format!("expected `<size> <path>`, got `{}`", quoted())))?;
        let size: u64 = match size.parse::<u64>() {
            Ok(s) if s <= MAX_LISTED_BYTES => s,
            Ok(_) => return Err(err(format!("size {size} is over the limit of 2^50 bytes"))),
            Err(_) => return Err(err(format!("size `{}` is not a number of bytes, in `{}`", escape_controls(size), quoted()))),
        };
        if path.is_empty() {
            return Err(err(format!("an empty path, in `{}`", quoted())));
        }
        let rel = if path == "." {
            ""
        } else if let Some(r) = path.strip_prefix("./") {
            r
        } else if path.starts_with('/') {
            return Err(err(format!("`{}` is not relative to `.` (list with `cd DIR && find .`)", escape_controls(path))));
        } else {
            path
        };
        let mut at = ROOT_INO;
        let comps: Vec<&str> = rel.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
        for (k, c) in comps.iter().enumerate() {
            if *c == ".." {
                return Err(err(format!("the path `{}` holds `..`", escape_controls(path))));
            }
            check_name(c).map_err(|e| err(format!("{e}, in the path `{}`", escape_controls(path))))?;
            let last = k + 1 == comps.len();
            let key = (at, c.to_string());
            at = match index.get(&key) {
                Some(&i) => i,
                None => {
                    if nodes.len() > MAX_ENTRIES {
                        return Err(err(format!("more than {MAX_ENTRIES} entries (the limit)")));
                    }
                    let i = nodes.len() as Ino;
                    nodes.push(Node { name: c.to_string(), parent: at, ..blank() });
                    listed.push(false);
                    typed.push(None);
                    nodes[at as usize].children.push(i);
                    index.insert(key, i);
                    i
                }
            };
            if !last {
                if typed[at as usize] == Some(Kind::File) {
                    return Err(err(format!("`{}` is below `{}`, listed as a file", escape_controls(path), comps[..=k].join("/"))));
                }
                nodes[at as usize].kind = Kind::Dir;
            }
        }
        if listed[at as usize] {
            return Err(err(format!("`{}` is listed twice", escape_controls(path))));
        }
        listed[at as usize] = true;
        if at == ROOT_INO {
            if kind == Some(Kind::File) {
                return Err(err("the root `.` is listed as a file".into()));
            }
            continue;
        }
        if kind == Some(Kind::File) && !nodes[at as usize].children.is_empty() {
            return Err(err(format!("`{}` is listed as a file but has entries listed before it", escape_controls(path))));
        }
        typed[at as usize] = kind;
        nodes[at as usize].size_bytes = size;
        if kind == Some(Kind::Dir) {
            nodes[at as usize].kind = Kind::Dir;
        }
    }
    for n in nodes.iter_mut().skip(1) {
        if !n.children.is_empty() {
            n.kind = Kind::Dir;
        }
        if n.kind == Kind::Dir {
            n.size_bytes = 0;
        }
    }
    Ok(Tree::from_unordered(nodes))
}

/// `(type, size, path)` of `[<type letter> ]<size> <path>`.
fn split_line(line: &str) -> Option<(Option<Kind>, &str, &str)> {
    let (first, rest) = line.split_once(' ')?;
    if first.len() == 1 && !first.as_bytes()[0].is_ascii_digit() {
        let kind = match first {
            "d" => Kind::Dir,
            "f" | "l" => Kind::File,
            _ => return None,
        };
        let (size, path) = rest.split_once(' ')?;
        return Some((Some(kind), size, path));
    }
    Some((None, first, rest))
}

trait FloorBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}

impl FloorBoundary for str {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        while !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}
