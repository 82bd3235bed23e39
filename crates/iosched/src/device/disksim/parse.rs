//! DiskSim's parameter syntax (libparam), as far as drive descriptions need it:
//! `TYPE NAME { key = value, ... }` blocks, values that are numbers, words, nested blocks
//! (`TYPE { ... }`), lists `[ ... ]` and `source FILE` (the file's block, path relative to the
//! including file); top-level `source FILE`, `instantiate [ names ] as NAME` and
//! `topology TYPE NAME [ TYPE NAME [ ... ] ... ]`; `#` comments to the end of the line.
//!
//! The parser is recursive, so nesting is bounded: blocks, lists and topology levels may nest
//! at most [`MAX_NESTING`] deep in all (sourced files included), and `source` at most
//! [`MAX_INCLUDE_DEPTH`] files deep; deeper input is an error naming the file and line, never a
//! stack overflow. Files are read only if they are regular files of at most
//! [`crate::input::MAX_DESCRIPTION_BYTES`].

use super::DiskSimError;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Where a token came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Loc {
    pub file: Rc<PathBuf>,
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Word(String),
    Block(Block),
    List(Vec<(Value, Loc)>),
}

impl Value {
    pub fn describe(&self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            // Extreme values in scientific notation (1e308, not 309 digits).
            Value::Float(f) if *f != 0.0 && !(1e-6..1e15).contains(&f.abs()) => format!("{f:e}"),
            Value::Float(f) => f.to_string(),
            Value::Word(w) => w.clone(),
            Value::Block(b) => format!("{} {{ ... }}", b.kind),
            Value::List(l) => format!("[ {} items ]", l.len()),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub value: Value,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub kind: String,
    pub name: Option<String>,
    pub params: Vec<Param>,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TopoNode {
    pub kind: String,
    pub name: String,
    pub children: Vec<TopoNode>,
}

/// Everything at the top level of a parameter file and the files it sources.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    pub blocks: Vec<Block>,
    /// `instantiate [ a, b ] as TYPE_NAME`: (instance names, block name).
    pub instances: Vec<(Vec<String>, String)>,
    pub topology: Vec<TopoNode>,
}

pub fn parse_file(path: &Path) -> Result<Document, DiskSimError> {
    let mut doc = Document::default();
    Parser::open(path, 0, 0)?.top_level(&mut doc)?;
    Ok(doc)
}

/// Parses text (for tests and for files already read); `source` paths are relative to `file`.
pub fn parse_str(text: &str, file: &Path) -> Result<Document, DiskSimError> {
    let mut doc = Document::default();
    Parser::new(text, file, 0, 0).top_level(&mut doc)?;
    Ok(doc)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    file: Rc<PathBuf>,
    /// `source` files open around this one.
    depth: usize,
    /// Blocks, lists and topology nodes open around the current position (counting those of
    /// the files that sourced this one).
    nesting: usize,
    /// The files that sourced this one, outermost first (a file sourcing itself is a cycle).
    ancestors: Vec<PathBuf>,
    /// Files opened by `source` so far in this description (shared by every file of it).
    sourced_count: Rc<std::cell::Cell<usize>>,
}

/// How many files deep `source` may go.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// How many files one description may source in all (counting a file each time it is sourced):
/// without this bound, a few files each sourcing the next several times would be read an
/// exponential number of times.
pub const MAX_SOURCED_FILES: usize = 256;
/// How deep blocks, lists and topology nodes may nest in all. DiskSim's own descriptions nest
/// about 5 deep; each level costs the parser a few hundred bytes of stack.
pub const MAX_NESTING: usize = 100;

fn is_word_char(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, '{' | '}' | '[' | ']' | '=' | ',' | '#')
}

impl Parser {
    fn new(text: &str, file: &Path, depth: usize, nesting: usize) -> Parser {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            line: 1,
            file: Rc::new(file.to_path_buf()),
            depth,
            nesting,
            ancestors: Vec::new(),
            sourced_count: Rc::default(),
        }
    }

    fn open(path: &Path, depth: usize, nesting: usize) -> Result<Parser, DiskSimError> {
        let text = crate::input::read_text(path, crate::input::MAX_DESCRIPTION_BYTES).map_err(|e| DiskSimError {
            file: path.to_path_buf(),
            line: e.line(),
            message: format!("cannot read: {e}"),
            text: String::new(),
        })?;
        super::load_cache::note_read(path, &text);
        Ok(Parser::new(&text, path, depth, nesting))
    }

    /// Enters one more level of nesting (a block, a list or a topology node).
    fn enter(&mut self, what: &str) -> Result<(), DiskSimError> {
        if self.nesting >= MAX_NESTING {
            return Err(
                self.err(format!("{what} nested more than {MAX_NESTING} deep"), self.rest_of_line().chars().take(40).collect::<String>())
            );
        }
        self.nesting += 1;
        Ok(())
    }

    fn err(&self, message: impl Into<String>, text: impl Into<String>) -> DiskSimError {
        DiskSimError { file: (*self.file).clone(), line: self.line, message: message.into(), text: text.into() }
    }

    fn loc(&self) -> Loc {
        Loc { file: self.file.clone(), line: self.line }
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) {
        while self.pos < self.chars.len() {
            let c = self.chars[self.pos];
            if c == '\n' {
                self.line += 1;
                self.pos += 1;
            } else if c.is_whitespace() {
                self.pos += 1;
            } else if c == '#' {
                while self.pos < self.chars.len() && self.chars[self.pos] != '\n' {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip();
        self.chars.get(self.pos).copied()
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), DiskSimError> {
        match self.peek() {
            Some(x) if x == c => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(self.err(format!("expected `{c}` {what}"), self.rest_of_line())),
            None => Err(self.err(format!("unexpected end of file: expected `{c}` {what}"), "")),
        }
    }

    fn rest_of_line(&self) -> String {
        let end = self.chars[self.pos..].iter().position(|&c| c == '\n').map_or(self.chars.len(), |i| self.pos + i);
        self.chars[self.pos..end].iter().collect::<String>().trim().to_string()
    }

    fn word(&mut self) -> Option<String> {
        self.skip();
        let start = self.pos;
        while self.pos < self.chars.len() && is_word_char(self.chars[self.pos]) {
            self.pos += 1;
        }
        (self.pos > start).then(|| self.chars[start..self.pos].iter().collect())
    }

    fn need_word(&mut self, what: &str) -> Result<String, DiskSimError> {
        match self.word() {
            Some(w) => Ok(w),
            None if self.pos >= self.chars.len() => Err(self.err(format!("unexpected end of file: expected {what}"), "")),
            None => Err(self.err(format!("expected {what}"), self.rest_of_line())),
        }
    }

    fn include_path(&self, name: &str) -> PathBuf {
        let base = self.file.parent().unwrap_or(Path::new("."));
        base.join(name)
    }

    fn sourced(&self, name: &str) -> Result<Parser, DiskSimError> {
        if self.depth >= MAX_INCLUDE_DEPTH {
            return Err(self.err(format!("`source` nested more than {MAX_INCLUDE_DEPTH} deep (a cycle?)"), name));
        }
        let path = self.include_path(name);
        if !path.exists() {
            return Err(self.err("`source`: no such file", path.display().to_string()));
        }
        let same = |a: &Path, b: &Path| a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
        if same(&path, &self.file) || self.ancestors.iter().any(|a| same(a, &path)) {
            return Err(self.err("`source` cycle: the file is already being read", path.display().to_string()));
        }
        let count = self.sourced_count.get() + 1;
        if count > MAX_SOURCED_FILES {
            return Err(self.err(format!("more than {MAX_SOURCED_FILES} files sourced in all"), name));
        }
        self.sourced_count.set(count);
        let mut sub = Parser::open(&path, self.depth + 1, self.nesting)?;
        sub.ancestors = self.ancestors.clone();
        sub.ancestors.push((*self.file).clone());
        sub.sourced_count = self.sourced_count.clone();
        Ok(sub)
    }

    fn top_level(&mut self, doc: &mut Document) -> Result<(), DiskSimError> {
        while self.peek().is_some() {
            let line = self.line;
            let kw = self.need_word("a block type, `source`, `instantiate` or `topology`")?;
            match kw.as_str() {
                "source" => {
                    let name = self.need_word("a file name after `source`")?;
                    self.sourced(&name)?.top_level(doc)?;
                }
                "instantiate" => {
                    let names = self.name_list()?;
                    let as_kw = self.need_word("`as`")?;
                    if as_kw != "as" {
                        return Err(self.err("expected `as` after the instance list", as_kw));
                    }
                    doc.instances.push((names, self.need_word("a block name after `as`")?));
                }
                "topology" => doc.topology.push(self.topo_node()?),
                _ => {
                    let name = self.need_word("a block name")?;
                    self.line = self.line.max(line);
                    doc.blocks.push(self.block_body(kw, Some(name))?);
                }
            }
        }
        Ok(())
    }

    fn name_list(&mut self) -> Result<Vec<String>, DiskSimError> {
        self.expect('[', "to open a list of names")?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                Some(']') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(',') => self.pos += 1,
                _ => out.push(self.need_word("a name or `]`")?),
            }
        }
    }

    fn topo_node(&mut self) -> Result<TopoNode, DiskSimError> {
        let kind = self.need_word("a component type in the topology")?;
        let name = self.need_word("a component name in the topology")?;
        self.expect('[', "after a topology component")?;
        self.enter("topology components")?;
        let mut children = Vec::new();
        loop {
            match self.peek() {
                Some(']') => {
                    self.pos += 1;
                    self.nesting -= 1;
                    return Ok(TopoNode { kind, name, children });
                }
                Some(',') => self.pos += 1,
                None => return Err(self.err("unexpected end of file in the topology: expected `]`", "")),
                _ => children.push(self.topo_node()?),
            }
        }
    }

    /// `{ name = value, ... }` after the block's type (and name).
    fn block_body(&mut self, kind: String, name: Option<String>) -> Result<Block, DiskSimError> {
        let loc = self.loc();
        self.expect('{', &format!("to open block `{kind}`"))?;
        self.enter("blocks and lists")?;
        let mut params = Vec::new();
        loop {
            match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    self.nesting -= 1;
                    return Ok(Block { kind, name, params, loc });
                }
                Some(',') => self.pos += 1,
                None => return Err(self.err(format!("unexpected end of file: block `{kind}` is not closed with `}}`"), "")),
                _ => params.push(self.param()?),
            }
        }
    }

    /// `Words of the name = value`.
    fn param(&mut self) -> Result<Param, DiskSimError> {
        self.skip();
        let loc = self.loc();
        let start = self.pos;
        while self.pos < self.chars.len() && !matches!(self.chars[self.pos], '=' | '\n' | '{' | '}' | '[' | ']' | ',' | '#') {
            self.pos += 1;
        }
        let raw: String = self.chars[start..self.pos].iter().collect();
        let name = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if self.chars.get(self.pos) != Some(&'=') || name.is_empty() {
            self.pos = start;
            return Err(self.err("expected `parameter name = value`", self.rest_of_line()));
        }
        self.pos += 1;
        let value = self.value()?;
        Ok(Param { name, value, loc })
    }

    fn value(&mut self) -> Result<Value, DiskSimError> {
        match self.peek() {
            None => Err(self.err("unexpected end of file: expected a value", "")),
            Some('[') => {
                self.pos += 1;
                self.enter("blocks and lists")?;
                let mut items = Vec::new();
                loop {
                    match self.peek() {
                        Some(']') => {
                            self.pos += 1;
                            self.nesting -= 1;
                            return Ok(Value::List(items));
                        }
                        Some(',') => self.pos += 1,
                        None => return Err(self.err("unexpected end of file: list not closed with `]`", "")),
                        _ => {
                            let loc = self.loc();
                            items.push((self.value()?, loc));
                        }
                    }
                }
            }
            Some('{') => Ok(Value::Block(self.block_body(String::new(), None)?)),
            Some(c) if !is_word_char(c) => Err(self.err("expected a value", self.rest_of_line())),
            Some(_) => {
                let w = self.word().unwrap();
                if w == "source" {
                    let name = self.need_word("a file name after `source`")?;
                    let mut sub = self.sourced(&name)?;
                    let kind = sub.need_word("a block type")?;
                    let bname = sub.need_word("a block name")?;
                    let b = sub.block_body(kind, Some(bname))?;
                    if sub.peek().is_some() {
                        return Err(sub.err("text after the sourced block", sub.rest_of_line()));
                    }
                    return Ok(Value::Block(b));
                }
                let (line, pos) = (self.line, self.pos);
                if self.peek() == Some('{') {
                    return Ok(Value::Block(self.block_body(w, None)?));
                }
                // `TYPE NAME { ... }` inline.
                if let Some(name) = self.word() {
                    if self.peek() == Some('{') {
                        return Ok(Value::Block(self.block_body(w, Some(name))?));
                    }
                }
                (self.line, self.pos) = (line, pos);
                if let Ok(i) = w.parse::<i64>() {
                    return Ok(Value::Int(i));
                }
                if w.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+' || c == '.') {
                    return match w.parse::<f64>() {
                        Ok(f) if f.is_finite() => Ok(Value::Float(f)),
                        _ => Err(self.err("malformed number", w)),
                    };
                }
                Ok(Value::Word(w))
            }
        }
    }
}
