//! A bounded reader for the block YAML that LISA writes (ruamel.yaml's default output of a
//! `PlatformInfo`): nested mappings and sequences by indentation, plain and quoted scalars,
//! empty flow collections (`[]`, `{}`), tags (`!!python/object:...`, `!!omap`,
//! `!!python/tuple`: ignored, the node is read as the mapping or sequence it is written as),
//! anchors and aliases (an alias inside the node it names, a cycle such as an energy-model
//! node's `parent` whose `children` list it, reads as null). No YAML crate is in the build (and none is needed for this subset).
//!
//! Bounds: the text is at most what the caller read (1 MiB for a platform file); nesting is at
//! most [`MAX_DEPTH`] levels; an alias shares its anchor's node (`Rc`), so aliases cost no
//! copies, however many there are. Anything outside the subset (flow collections with content,
//! block scalars `|` and `>`, multi-line plain scalars, several documents) is an error at its
//! line.

use std::collections::HashMap;
use std::rc::Rc;

/// A node of the document.
#[derive(Debug, PartialEq)]
pub enum Node {
    Null,
    Scalar(String),
    Seq(Vec<Rc<Node>>),
    /// Keys in file order.
    Map(Vec<(String, Rc<Node>)>),
}

impl Node {
    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Rc<Node>> {
        match self {
            Node::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn scalar(&self) -> Option<&str> {
        match self {
            Node::Scalar(s) => Some(s),
            _ => None,
        }
    }

    pub fn items(&self) -> &[Rc<Node>] {
        match self {
            Node::Seq(v) => v,
            _ => &[],
        }
    }

    pub fn entries(&self) -> &[(String, Rc<Node>)] {
        match self {
            Node::Map(m) => m,
            _ => &[],
        }
    }
}

/// The deepest nesting read.
pub const MAX_DEPTH: usize = 64;

/// A parse error: the 1-based line and what was expected.
pub type Error = (usize, String);

struct Line {
    indent: usize,
    text: String,
    no: usize,
}

struct Parser {
    lines: Vec<Line>,
    pos: usize,
    anchors: HashMap<String, Rc<Node>>,
}

/// Parses `text` into its root node.
pub fn parse(text: &str) -> Result<Rc<Node>, Error> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let trimmed = raw.trim_end();
        let body = trimmed.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') || body == "---" {
            continue;
        }
        if body.starts_with('\t') {
            return Err((
                no,
                "a tab in the indentation; YAML indents with spaces".into(),
            ));
        }
        if body == "..." {
            break;
        }
        lines.push(Line {
            indent: trimmed.len() - body.len(),
            text: body.to_string(),
            no,
        });
    }
    let mut p = Parser {
        lines,
        pos: 0,
        anchors: HashMap::new(),
    };
    let Some(first) = p.lines.first() else {
        return Ok(Rc::new(Node::Null));
    };
    let root = p.block(first.indent, 0)?;
    if let Some(l) = p.lines.get(p.pos) {
        return Err((
            l.no,
            "expected the end of the document (the indentation is off)".into(),
        ));
    }
    Ok(root)
}

/// Splits `key: rest` (a plain or quoted key); `None` when the line is not a mapping entry.
fn split_key(text: &str) -> Option<(String, &str)> {
    if let Some(q) = text.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = text[1..].find(q)? + 1;
        let rest = text[end + 1..].strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        return Some((text[1..end].to_string(), rest.trim_start()));
    }
    let mut from = 0;
    while let Some(i) = text[from..].find(':') {
        let at = from + i;
        let after = &text[at + 1..];
        if after.is_empty() || after.starts_with(' ') {
            return Some((text[..at].trim_end().to_string(), after.trim_start()));
        }
        from = at + 1;
    }
    None
}

/// Strips a leading `&anchor` and `!tag` (in either order): the anchor's name and the rest.
fn properties(mut text: &str) -> (Option<String>, &str) {
    let mut anchor = None;
    loop {
        if let Some(rest) = text.strip_prefix('&') {
            let end = rest.find(' ').unwrap_or(rest.len());
            anchor = Some(rest[..end].to_string());
            text = rest[end..].trim_start();
        } else if text.starts_with('!') {
            let end = text.find(' ').unwrap_or(text.len());
            text = text[end..].trim_start();
        } else {
            return (anchor, text);
        }
    }
}

/// Whether a line starts a sequence item.
fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

impl Parser {
    fn depth_check(&self, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            let no = self.lines.get(self.pos).map_or(0, |l| l.no);
            return Err((no, format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    /// The block node whose first line (the current one) is at `indent`.
    fn block(&mut self, indent: usize, depth: usize) -> Result<Rc<Node>, Error> {
        self.depth_check(depth)?;
        let line = &self.lines[self.pos];
        if is_item(&line.text) {
            self.seq(indent, depth)
        } else if split_key(&line.text).is_some() {
            self.map(indent, depth)
        } else {
            let (no, text) = (line.no, line.text.clone());
            self.pos += 1;
            self.inline(&text, no, indent, depth)
        }
    }

    fn seq(&mut self, indent: usize, depth: usize) -> Result<Rc<Node>, Error> {
        let mut items = Vec::new();
        while let Some(l) = self.lines.get(self.pos) {
            if l.indent != indent || !is_item(&l.text) {
                break;
            }
            let rest = l.text[1..].trim_start();
            if rest.is_empty() {
                let no = l.no;
                self.pos += 1;
                items.push(self.nested(indent, no, depth)?);
                continue;
            }
            // The item's content is a node starting at its own column.
            let column = indent + (l.text.len() - rest.len());
            let rest = rest.to_string();
            let l = &mut self.lines[self.pos];
            l.indent = column;
            l.text = rest;
            items.push(self.block(column, depth + 1)?);
        }
        Ok(Rc::new(Node::Seq(items)))
    }

    fn map(&mut self, indent: usize, depth: usize) -> Result<Rc<Node>, Error> {
        let mut entries: Vec<(String, Rc<Node>)> = Vec::new();
        while let Some(l) = self.lines.get(self.pos) {
            if l.indent != indent || is_item(&l.text) {
                break;
            }
            let no = l.no;
            let Some((key, rest)) = split_key(&l.text) else {
                return Err((no, "expected `key: value` at this indentation".into()));
            };
            let rest = rest.to_string();
            self.pos += 1;
            let value = self.inline(&rest, no, indent, depth)?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err((no, format!("the key `{key}` appears twice in one mapping")));
            }
            entries.push((key, value));
        }
        Ok(Rc::new(Node::Map(entries)))
    }

    /// The value written after a key or a `-` (possibly only properties), with its block
    /// below when it has one.
    fn inline(
        &mut self,
        text: &str,
        no: usize,
        indent: usize,
        depth: usize,
    ) -> Result<Rc<Node>, Error> {
        let (anchor, rest) = properties(text);
        if let Some(a) = &anchor {
            // An alias inside the node it names (a cycle) reads as null until it is complete.
            self.anchors.insert(a.clone(), Rc::new(Node::Null));
        }
        let node = if rest.is_empty() {
            self.nested(indent, no, depth)?
        } else if let Some(name) = rest.strip_prefix('*') {
            self.anchors
                .get(name.trim())
                .cloned()
                .ok_or_else(|| (no, format!("the alias *{name} names no anchor above it")))?
        } else {
            Rc::new(scalar(rest, no)?)
        };
        if let Some(a) = anchor {
            self.anchors.insert(a, node.clone());
        }
        Ok(node)
    }

    /// The block under a key or `-` at `indent`: deeper lines, or (for a key) a sequence at
    /// the same indentation, as YAML allows; none is a null.
    fn nested(&mut self, indent: usize, _no: usize, depth: usize) -> Result<Rc<Node>, Error> {
        match self.lines.get(self.pos) {
            Some(l) if l.indent > indent => {
                let i = l.indent;
                self.block(i, depth + 1)
            }
            Some(l) if l.indent == indent && is_item(&l.text) => self.seq(indent, depth + 1),
            _ => Ok(Rc::new(Node::Null)),
        }
    }
}

/// A scalar written on one line: plain, quoted, `null`/`~`, or an empty flow collection.
fn scalar(text: &str, no: usize) -> Result<Node, Error> {
    let t = text.trim();
    Ok(match t {
        "null" | "~" | "Null" | "NULL" => Node::Null,
        "[]" => Node::Seq(Vec::new()),
        "{}" => Node::Map(Vec::new()),
        _ if t.starts_with('[') || t.starts_with('{') => {
            return Err((
                no,
                "flow collections are not read; write them as blocks".into(),
            ))
        }
        _ if t.starts_with('|') || t.starts_with('>') => {
            return Err((no, "block scalars (`|`, `>`) are not read".into()))
        }
        _ if t.starts_with('\'') => {
            let inner = t
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .ok_or((
                    no,
                    "a single-quoted string that does not end on its line".into(),
                ))?;
            Node::Scalar(inner.replace("''", "'"))
        }
        _ if t.starts_with('"') => {
            let inner = t
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .ok_or((
                    no,
                    "a double-quoted string that does not end on its line".into(),
                ))?;
            Node::Scalar(inner.replace("\\\"", "\"").replace("\\\\", "\\"))
        }
        _ => Node::Scalar(t.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Rc<Node> {
        Rc::new(Node::Scalar(v.to_string()))
    }

    #[test]
    fn mappings_sequences_and_compact_nesting() {
        let doc = "a:\n  b: 1\n  c:\n  - 2\n  -   - 3\n      - 4\nd: x\n";
        let root = parse(doc).unwrap();
        assert_eq!(root.get("d").unwrap(), &s("x"));
        let a = root.get("a").unwrap();
        assert_eq!(a.get("b").unwrap(), &s("1"));
        let c = a.get("c").unwrap().items();
        assert_eq!(c[0], s("2"));
        assert_eq!(c[1].items(), &[s("3"), s("4")]);
    }

    #[test]
    fn tags_anchors_aliases_and_omap_items() {
        let doc = "\
x: &id1 !!python/object:m.C
    v: 1
l: !!omap
-   450: !!python/object/new:m.S
    - 236.1
    - 42
y: *id1
t: !!python/tuple
- 7
n: null
e: []
";
        let root = parse(doc).unwrap();
        assert!(Rc::ptr_eq(root.get("x").unwrap(), root.get("y").unwrap()));
        let item = &root.get("l").unwrap().items()[0];
        assert_eq!(item.get("450").unwrap().items(), &[s("236.1"), s("42")]);
        assert_eq!(root.get("t").unwrap().items(), &[s("7")]);
        assert_eq!(**root.get("n").unwrap(), Node::Null);
        assert_eq!(**root.get("e").unwrap(), Node::Seq(vec![]));
    }

    #[test]
    fn what_is_outside_the_subset_is_an_error_at_its_line() {
        assert_eq!(parse("a: 1\nb: [1, 2]\n").unwrap_err().0, 2);
        assert_eq!(parse("a: *nope\n").unwrap_err().0, 1);
        assert_eq!(parse("a: 1\na: 2\n").unwrap_err().0, 2);
        let deep: String = (0..100).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
        assert!(parse(&deep).unwrap_err().1.contains("nesting deeper"));
    }
}
