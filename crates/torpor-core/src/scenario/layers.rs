//! The scenario file as layers of TOML: the base tables, and each `[[variant]]` deep-merged
//! over them. Remembers which line supplied every key, so an error found in a merged variant
//! (by serde or by a semantic check) points at the line the user wrote.
//!
//! Paths name keys as dotted strings with array indices: `platform.nvme.preset`,
//! `workload.job[1].bs`, `variant[0].policy.apst.algorithm`.

use std::collections::HashMap;

use toml::{Table, Value};
use toml_edit::{ImDocument, Item};

use crate::error::LineStarts;

/// The line (1-based) of every key path of a TOML text.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    of: HashMap<String, usize>,
}

impl Lines {
    /// Indexes `text`, which must already have parsed as TOML (else the index stays empty).
    pub fn index(text: &str) -> Lines {
        let mut lines = Lines::default();
        if let Ok(doc) = ImDocument::parse(text) {
            lines.table(&LineStarts::new(text), doc.as_table(), "");
        }
        lines
    }

    fn put(&mut self, starts: &LineStarts, path: &str, span: Option<std::ops::Range<usize>>) {
        if let Some(s) = span {
            self.of
                .entry(path.to_string())
                .or_insert_with(|| starts.line_of(s.start));
        }
    }

    fn table(&mut self, starts: &LineStarts, t: &toml_edit::Table, path: &str) {
        // The document itself has no line: a key missing at the top level is the whole file's.
        if !path.is_empty() {
            self.put(starts, path, t.span());
        }
        for (k, item) in t.iter() {
            let p = join(path, k);
            self.put(starts, &p, t.key(k).and_then(|key| key.span()));
            self.item(starts, item, &p);
        }
    }

    fn item(&mut self, starts: &LineStarts, item: &Item, path: &str) {
        match item {
            Item::Table(t) => self.table(starts, t, path),
            Item::ArrayOfTables(a) => {
                for (i, t) in a.iter().enumerate() {
                    self.table(starts, t, &format!("{path}[{i}]"));
                }
            }
            Item::Value(v) => self.value(starts, v, path),
            Item::None => {}
        }
    }

    fn value(&mut self, starts: &LineStarts, v: &toml_edit::Value, path: &str) {
        self.put(starts, path, v.span());
        match v {
            toml_edit::Value::InlineTable(t) => {
                for (k, inner) in t.iter() {
                    let p = join(path, k);
                    self.put(starts, &p, t.key(k).and_then(|key| key.span()));
                    self.value(starts, inner, &p);
                }
            }
            toml_edit::Value::Array(a) => {
                for (i, inner) in a.iter().enumerate() {
                    self.value(starts, inner, &format!("{path}[{i}]"));
                }
            }
            _ => {}
        }
    }

    /// The line of `path` as seen by variant `variant` (its own overlay first, then the
    /// base), falling back to the nearest enclosing key that has one.
    pub fn find(&self, variant: Option<usize>, path: &str) -> Option<usize> {
        let mut p = path;
        loop {
            if let Some(i) = variant {
                let key = if p.is_empty() {
                    format!("variant[{i}]")
                } else {
                    format!("variant[{i}].{p}")
                };
                if let Some(&l) = self.of.get(&key) {
                    return Some(l);
                }
            }
            if let Some(&l) = self.of.get(p) {
                return Some(l);
            }
            if p.is_empty() {
                return None;
            }
            p = parent(p);
        }
    }
}

/// The path of `key` inside the table at `path` (`""` is the top level).
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `a.b[2].c` -> `a.b[2]` -> `a.b` -> `a` -> ``.
fn parent(path: &str) -> &str {
    match path.rfind(['.', '[']) {
        Some(i) => &path[..i],
        None => "",
    }
}

/// How many keys and values `table` holds, counted through its tables and arrays: the work
/// of checking it once.
pub fn key_count(table: &Table) -> usize {
    fn values(v: &Value) -> usize {
        1 + match v {
            Value::Table(t) => key_count(t),
            Value::Array(a) => a.iter().map(values).sum(),
            _ => 0,
        }
    }
    table.values().map(values).sum()
}

/// Merges `overlay` into `base`: tables merge key by key, anything else replaces.
pub fn deep_merge(base: &mut Table, overlay: &Table) {
    for (k, v) in overlay {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => deep_merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The most keys a dotted field path may name: the scenario's deepest field
/// (`platform.nvme.idle_power_mw.PS3`) has four; each creates a table, and a path of a
/// hundred thousand would nest them past what the stack can drop.
pub const MAX_FIELD_DEPTH: usize = 8;

/// The longest dotted field path, in bytes.
pub const MAX_FIELD_PATH_BYTES: usize = 256;

/// Sets the field at dotted `path` (tables only, e.g. `policy.apst.primary_timeout_ms`) to
/// `value`, creating the tables on the way: how a sweep varies one field of a scenario.
pub fn set_field(root: &mut Table, path: &str, value: Value) -> Result<(), String> {
    if path.len() > MAX_FIELD_PATH_BYTES || path.split('.').count() > MAX_FIELD_DEPTH {
        return Err(format!(
            "{}: expected a dotted path of at most {MAX_FIELD_DEPTH} keys and \
             {MAX_FIELD_PATH_BYTES} bytes, such as policy.apst.algorithm",
            crate::error::shown(path)
        ));
    }
    let mut keys = path.split('.').peekable();
    let mut table = root;
    while let Some(key) = keys.next() {
        if key.is_empty() {
            return Err(format!(
                "`{path}`: expected a dotted path such as policy.apst.algorithm"
            ));
        }
        if keys.peek().is_none() {
            table.insert(key.to_string(), value);
            return Ok(());
        }
        let next = table
            .entry(key.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        table = match next {
            Value::Table(t) => t,
            _ => return Err(format!("`{path}`: `{key}` is a value, not a table")),
        };
    }
    Err(format!(
        "`{path}`: expected a dotted path such as policy.apst.algorithm"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_headers_keys_arrays_and_inline_tables() {
        let text = "a = 1\n[t]\nb = 2\nc = { d = 3 }\n[[job]]\nx = 1\n[[job]]\nx = 2\n";
        let l = Lines::index(text);
        assert_eq!(l.find(None, "a"), Some(1));
        assert_eq!(l.find(None, "t"), Some(2));
        assert_eq!(l.find(None, "t.b"), Some(3));
        assert_eq!(l.find(None, "t.c.d"), Some(4));
        assert_eq!(l.find(None, "job[1].x"), Some(8));
        assert_eq!(l.find(None, "job[1]"), Some(7));
        // An unknown key falls back to its table.
        assert_eq!(l.find(None, "t.nope"), Some(2));
    }

    #[test]
    fn a_variant_sees_its_own_lines_first() {
        let text = "[p]\nk = 1\n[[variant]]\nname = \"v\"\n[variant.p]\nk = 2\n";
        let l = Lines::index(text);
        assert_eq!(l.find(Some(0), "p.k"), Some(6));
        assert_eq!(l.find(None, "p.k"), Some(2));
        assert_eq!(l.find(Some(1), "p.k"), Some(2));
    }

    #[test]
    fn key_count_counts_every_key_and_element() {
        // a, t, t.b, t.c, t.c's 2 elements, job, job's 2 tables, their x each: 11.
        let t: Table =
            toml::from_str("a = 1\n[t]\nb = 2\nc = [3, 4]\n[[job]]\nx = 1\n[[job]]\nx = 2\n")
                .unwrap();
        assert_eq!(key_count(&t), 11);
        assert_eq!(key_count(&Table::new()), 0);
    }

    #[test]
    fn merge_is_deep_for_tables_and_replaces_the_rest() {
        let mut base: Table = toml::from_str("[a]\nx = 1\ny = [1, 2]\n[b]\nz = 1\n").unwrap();
        let over: Table = toml::from_str("[a]\ny = [3]\nw = 4\n").unwrap();
        deep_merge(&mut base, &over);
        let want: Table = toml::from_str("[a]\nx = 1\ny = [3]\nw = 4\n[b]\nz = 1\n").unwrap();
        assert_eq!(base, want);
    }

    #[test]
    fn set_field_creates_tables_and_refuses_to_descend_into_values() {
        let mut t: Table = toml::from_str("[policy]\nx = 1\n").unwrap();
        set_field(&mut t, "policy.apst.primary_timeout_ms", Value::Integer(50)).unwrap();
        assert_eq!(
            t["policy"]["apst"]["primary_timeout_ms"],
            Value::Integer(50)
        );
        assert!(set_field(&mut t, "policy.x.y", Value::Integer(1)).is_err());
        assert!(set_field(&mut t, "policy..y", Value::Integer(1)).is_err());
        // Nine keys, or 257 bytes, are refused before any table is made.
        let deep = ["a"; 9].join(".");
        assert!(set_field(&mut t, &deep, Value::Integer(1))
            .unwrap_err()
            .contains("at most 8 keys and 256 bytes"));
        assert!(set_field(&mut t, &"k".repeat(257), Value::Integer(1)).is_err());
        assert!(!t.contains_key("a"));
        set_field(&mut t, &["b"; 8].join("."), Value::Integer(1)).unwrap();
    }
}
