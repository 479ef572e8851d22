//! The text descriptions a trace.dat carries, as the kernel writes them under
//! `/sys/kernel/tracing/events/`: each event's `format` file, the ring buffer's `header_page`
//! and `header_event`, and the symbol tables of a `print fmt` that torpor reads back
//! (`__print_flags`, `__print_symbolic`).
//!
//! A format file is `name: NAME`, `ID: N`, `format:`, one line per field
//! (`field:TYPE NAME;  offset:N;  size:N;  signed:N;`, `signed` missing on old kernels), and
//! `print fmt: "...", ARGS`. A field is a scalar, a fixed array (`char comm[16]`), or a
//! dynamic one (`__data_loc char[] name`: a 32-bit word whose low 16 bits are the offset of
//! the data in the record and high 16 bits its length; `__rel_loc`: the same, the offset
//! counted from the end of the word). Lines that are none of these (some `ftrace` formats
//! have them) leave no field: an event torpor decodes that needs such a field is refused when
//! one of its records is met.

use std::collections::HashMap;

/// The most fields one format may have (real ones have a few dozen).
pub const MAX_FIELDS: usize = 1024;

/// How a field's bytes are laid out in the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A number (or a pointer) of `size` bytes.
    Scalar,
    /// A fixed array of `size` bytes in all.
    Array,
    /// `__data_loc`: a word locating the data from the record's start.
    DataLoc,
    /// `__rel_loc`: a word locating the data from the end of the word.
    RelLoc,
}

/// One `field:` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDef {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    pub layout: Layout,
}

/// One event's format file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventFormat {
    pub name: String,
    pub id: u32,
    pub fields: Vec<FieldDef>,
    pub print_fmt: String,
}

impl EventFormat {
    pub fn field(&self, name: &str) -> Option<&FieldDef> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Parses one format file; the error is what was expected, without a location.
pub fn parse_event_format(text: &str) -> Result<EventFormat, String> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = Some(
                v.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("expected a number after `ID:`, got {:?}", v.trim()))?,
            );
        } else if let Some(v) = t.strip_prefix("print fmt:") {
            print_fmt = v.trim().to_string();
        } else if t.starts_with("field") {
            if let Some(f) = parse_field_line(t) {
                if fields.len() >= MAX_FIELDS {
                    return Err(format!(
                        "expected at most {MAX_FIELDS} fields in one format"
                    ));
                }
                fields.push(f);
            }
        }
    }
    let name = name
        .filter(|n| !n.is_empty())
        .ok_or("expected a `name:` line in an event format")?;
    let id = id.ok_or_else(|| format!("expected an `ID:` line in the format of `{name}`"))?;
    Ok(EventFormat {
        name,
        id,
        fields,
        print_fmt,
    })
}

/// `field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;` (also `field special:` and a space after
/// the colon, as `header_page` has); `None` when the line is not of that shape.
pub fn parse_field_line(line: &str) -> Option<FieldDef> {
    let rest = line.strip_prefix("field")?;
    let rest = &rest[rest.find(':')? + 1..];
    let mut parts = rest.split(';').map(str::trim);
    let decl = parts.next()?;
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for p in parts {
        if let Some((k, v)) = p.split_once(':') {
            match k.trim() {
                "offset" => offset = v.trim().parse::<usize>().ok(),
                "size" => size = v.trim().parse::<usize>().ok(),
                "signed" => signed = v.trim() == "1",
                _ => {}
            }
        }
    }
    let (offset, size) = (offset?, size?);
    let layout = if decl.starts_with("__data_loc") {
        Layout::DataLoc
    } else if decl.starts_with("__rel_loc") {
        Layout::RelLoc
    } else if decl.ends_with(']') {
        Layout::Array
    } else {
        Layout::Scalar
    };
    // The name is the last identifier, before any `[N]`.
    let bare = match decl.rfind('[') {
        Some(open) if layout == Layout::Array => decl[..open].trim_end(),
        _ => decl,
    };
    let start = bare
        .char_indices()
        .rfind(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let name = &bare[start..];
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    Some(FieldDef {
        name: name.to_string(),
        offset,
        size,
        signed,
        layout,
    })
}

/// The ring buffer's page header (`header_page`): where the page's timestamp, its commit word
/// (the bytes of data written, with the lost-events flags) and its data are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageHeader {
    pub timestamp: (usize, usize),
    pub commit: (usize, usize),
    /// Offset of the data and the most data a page holds.
    pub data_offset: usize,
    pub data_size: usize,
}

/// Reads `header_page`; the error is what was expected.
pub fn parse_page_header(text: &str) -> Result<PageHeader, String> {
    let fields: HashMap<String, FieldDef> = text
        .lines()
        .filter_map(|l| parse_field_line(l.trim()))
        .map(|f| (f.name.clone(), f))
        .collect();
    let get = |name: &str| {
        fields.get(name).ok_or_else(|| {
            format!("expected a `{name}` field in the ring buffer's page header (header_page)")
        })
    };
    let (ts, commit, data) = (get("timestamp")?, get("commit")?, get("data")?);
    if ts.size != 8 {
        return Err(format!(
            "expected an 8-byte page timestamp in header_page, got {} bytes",
            ts.size
        ));
    }
    if commit.size != 4 && commit.size != 8 {
        return Err(format!(
            "expected a 4- or 8-byte commit word in header_page, got {} bytes",
            commit.size
        ));
    }
    if data.offset < ts.offset + 8 || data.offset < commit.offset + commit.size {
        return Err("expected the page's data after its timestamp and commit word".into());
    }
    Ok(PageHeader {
        timestamp: (ts.offset, ts.size),
        commit: (commit.offset, commit.size),
        data_offset: data.offset,
        data_size: data.size,
    })
}

/// The record header's types (`header_event`): the type_len values of padding, a time
/// extend and an absolute timestamp (kernels before 4.17 have none and do not list it);
/// anything up to `data_max` is a data record whose length is `type_len` words (0: the length
/// is in the next word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventHeader {
    pub padding: u32,
    pub time_extend: u32,
    pub time_stamp: Option<u32>,
    pub data_max: u32,
}

/// The width of `type_len` and `time_delta` in the record header word torpor decodes.
const TYPE_LEN_BITS: u32 = 5;
const TIME_DELTA_BITS: u32 = 27;

/// Reads `header_event`, which must describe the 5-bit type_len, 27-bit time_delta layout
/// (every kernel since 2.6.31).
pub fn parse_event_header(text: &str) -> Result<EventHeader, String> {
    let mut bits: HashMap<&str, u32> = HashMap::new();
    let mut types: HashMap<&str, u32> = HashMap::new();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let value = value.trim();
        if let Some(n) = value.strip_suffix("bits") {
            if let Ok(n) = n.trim().parse() {
                bits.insert(key, n);
            }
        } else if let Some((_, n)) = value.rsplit_once("==") {
            if let Ok(n) = n.trim().parse() {
                types.insert(key, n);
            }
        }
    }
    // `data max type_len  == 28` has its number after `==` in the key itself.
    let data_max = text
        .lines()
        .find(|l| l.trim_start().starts_with("data max type_len"))
        .and_then(|l| l.rsplit_once("=="))
        .and_then(|(_, n)| n.trim().parse().ok());
    if bits.get("type_len") != Some(&TYPE_LEN_BITS)
        || bits.get("time_delta") != Some(&TIME_DELTA_BITS)
    {
        return Err(format!(
            "expected a record header of a {TYPE_LEN_BITS}-bit type_len and a \
             {TIME_DELTA_BITS}-bit time_delta in header_event"
        ));
    }
    let get = |k: &str| {
        types
            .get(k)
            .copied()
            .filter(|&n| n < 1 << TYPE_LEN_BITS)
            .ok_or_else(|| format!("expected `{k} : type == N` in header_event"))
    };
    let h = EventHeader {
        padding: get("padding")?,
        time_extend: get("time_extend")?,
        time_stamp: types
            .get("time_stamp")
            .copied()
            .filter(|&n| n < 1 << TYPE_LEN_BITS),
        data_max: data_max
            .filter(|&n: &u32| n < 1 << TYPE_LEN_BITS)
            .ok_or("expected `data max type_len == N` in header_event")?,
    };
    if [Some(h.padding), Some(h.time_extend), h.time_stamp]
        .iter()
        .flatten()
        .any(|&t| t <= h.data_max)
    {
        return Err(
            "expected the padding, time_extend and time_stamp types above data max in \
                    header_event"
                .into(),
        );
    }
    Ok(h)
}

/// A `__print_flags(REC->FIELD & MASK, "DELIM", { VALUE, "NAME" }, ...)` of a print fmt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagTable {
    /// The mask applied to the field before the flags are named (all bits when none).
    pub mask: u64,
    pub delimiter: String,
    pub entries: Vec<(u64, String)>,
}

/// The `__print_flags` of `field` in `print_fmt`, if it has one whose entries evaluate.
pub fn print_flags(print_fmt: &str, field: &str) -> Option<FlagTable> {
    let args = helper_args(print_fmt, "__print_flags", field)?;
    let (first, delim, rest) = (args.first()?, args.get(1)?, args.get(2..)?);
    let mask = match first.split_once('&') {
        Some((_, m)) => eval(m)?,
        None => u64::MAX,
    };
    Some(FlagTable {
        mask,
        delimiter: string_literal(delim)?,
        entries: rest.iter().filter_map(|e| entry(e)).collect(),
    })
}

/// The `__print_symbolic(REC->FIELD, { VALUE, "NAME" }, ...)` of `field` in `print_fmt`.
pub fn print_symbolic(print_fmt: &str, field: &str) -> Option<Vec<(u64, String)>> {
    let args = helper_args(print_fmt, "__print_symbolic", field)?;
    Some(args.get(1..)?.iter().filter_map(|e| entry(e)).collect())
}

/// The most calls of one helper looked at in a print fmt.
const MAX_HELPER_CALLS: usize = 16;

/// The deepest nesting of an expression evaluated.
const MAX_DEPTH: usize = 64;

/// The top-level arguments of the first call to `helper` whose first argument reads
/// `REC->field`.
fn helper_args<'a>(print_fmt: &'a str, helper: &str, field: &str) -> Option<Vec<&'a str>> {
    let needle = format!("{helper}(");
    let mut from = 0;
    // Real print fmts call a helper once or twice; a few more are looked at, not thousands.
    for _ in 0..MAX_HELPER_CALLS {
        let at = print_fmt[from..].find(&needle)?;
        let open = from + at + needle.len();
        let args = split_args(&print_fmt[open..])?;
        if args.first().is_some_and(|a| names_field(a, field)) {
            return Some(args);
        }
        from = open;
    }
    None
}

/// Whether `expr` reads `REC->field` (and not a longer name starting with it).
fn names_field(expr: &str, field: &str) -> bool {
    let needle = format!("REC->{field}");
    expr.match_indices(&needle).any(|(i, _)| {
        !expr[i + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Splits `text` (just after an opening parenthesis) at its top-level commas up to the
/// matching closing parenthesis; quoted strings, brackets and braces nest.
fn split_args(text: &str) -> Option<Vec<&str>> {
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if quoted {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' if depth > 0 => depth -= 1,
            ')' => {
                args.push(text[start..i].trim());
                return Some(args);
            }
            ',' if depth == 0 => {
                args.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// `{ VALUE, "NAME" }`.
fn entry(text: &str) -> Option<(u64, String)> {
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?;
    let (value, name) = inner.rsplit_once(',')?;
    Some((eval(value)?, string_literal(name)?))
}

/// A C string literal's text (with `\"`, `\\`, `\n`, `\t` unescaped).
pub fn string_literal(text: &str) -> Option<String> {
    let inner = text.trim().strip_prefix('"')?.strip_suffix('"')?;
    Some(unescape(inner))
}

/// `\n`, `\t`, `\\`, `\"` and other escaped characters as themselves.
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Evaluates the integer constant expressions print fmts hold: numbers (decimal, hex, with
/// `U`/`L` suffixes), parentheses, casts (skipped), `~`, `+`, `-`, `<<`, `>>`, `&`, `|`, with
/// C's precedence. `None` for anything else (a name, a call).
pub fn eval(text: &str) -> Option<u64> {
    let tokens = tokenize(text)?;
    let mut p = Parser {
        tokens,
        at: 0,
        depth: 0,
    };
    let v = p.or()?;
    (p.at == p.tokens.len()).then_some(v)
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(u64),
    Name,
    Op(&'static str),
}

fn tokenize(text: &str) -> Option<Vec<Tok>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let lit = text[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let v = match lit.strip_prefix("0x").or_else(|| lit.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                None => lit.parse().ok()?,
            };
            out.push(Tok::Num(v));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name);
        } else {
            let two = text.get(i..i + 2);
            let op = match two {
                Some("<<") => "<<",
                Some(">>") => ">>",
                _ => match c {
                    b'(' => "(",
                    b')' => ")",
                    b'~' => "~",
                    b'+' => "+",
                    b'-' => "-",
                    b'&' => "&",
                    b'|' => "|",
                    b'*' => "*",
                    _ => return None,
                },
            };
            i += op.len();
            out.push(Tok::Op(op));
        }
    }
    Some(out)
}

struct Parser {
    tokens: Vec<Tok>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, op: &'static str) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Option<u64> {
        let mut v = self.and()?;
        while self.eat("|") {
            v |= self.and()?;
        }
        Some(v)
    }

    fn and(&mut self) -> Option<u64> {
        let mut v = self.shift()?;
        while self.eat("&") {
            v &= self.shift()?;
        }
        Some(v)
    }

    fn shift(&mut self) -> Option<u64> {
        let mut v = self.sum()?;
        loop {
            if self.eat("<<") {
                v = v.checked_shl(u32::try_from(self.sum()?).ok()?)?;
            } else if self.eat(">>") {
                v = v.checked_shr(u32::try_from(self.sum()?).ok()?)?;
            } else {
                return Some(v);
            }
        }
    }

    fn sum(&mut self) -> Option<u64> {
        let mut v = self.unary()?;
        loop {
            if self.eat("+") {
                v = v.wrapping_add(self.unary()?);
            } else if self.eat("-") {
                v = v.wrapping_sub(self.unary()?);
            } else {
                return Some(v);
            }
        }
    }

    fn unary(&mut self) -> Option<u64> {
        self.depth += 1;
        let v = if self.depth > MAX_DEPTH {
            None
        } else {
            self.unary_inner()
        };
        self.depth -= 1;
        v
    }

    fn unary_inner(&mut self) -> Option<u64> {
        if self.eat("~") {
            return Some(!self.unary()?);
        }
        if self.eat("-") {
            return Some(self.unary()?.wrapping_neg());
        }
        if self.eat("(") {
            // A cast: `(unsigned long)` or `(u64 *)`, names and stars only.
            let mut k = self.at;
            while matches!(self.tokens.get(k), Some(Tok::Name) | Some(Tok::Op("*"))) {
                k += 1;
            }
            if k > self.at && self.tokens.get(k) == Some(&Tok::Op(")")) {
                self.at = k + 1;
                return self.unary();
            }
            let v = self.or()?;
            return self.eat(")").then_some(v);
        }
        match self.peek()? {
            Tok::Num(n) => {
                let n = *n;
                self.at += 1;
                Some(n)
            }
            _ => None,
        }
    }
}
