//! The two address tables a trace.dat carries for the text of its records: the traced
//! machine's `/proc/kallsyms` (`ADDRESS TYPE NAME [MODULE]` per line), which names the
//! functions of timer events (their print fmt shows a function pointer with `%ps`: the name of
//! the symbol that holds the address), and `printk_formats` (`0xADDRESS : "TEXT"` per line),
//! the constant strings some events record by address (the reason of an `ipi_*` event).

use std::collections::HashMap;

/// `/proc/kallsyms` sorted by address, names in one buffer.
#[derive(Debug, Default)]
pub struct Kallsyms {
    /// (address, start and end of the name in `names`), sorted by address.
    symbols: Vec<(u64, u32, u32)>,
    names: String,
}

impl Kallsyms {
    /// Reads the file's text; lines that are not `ADDRESS TYPE NAME` are skipped (a table
    /// with a few odd lines still names the rest).
    pub fn parse(text: &str) -> Kallsyms {
        let mut k = Kallsyms::default();
        for line in text.lines() {
            let mut it = line.split_ascii_whitespace();
            let (Some(addr), Some(_kind), Some(name)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            let start = k.names.len();
            k.names.push_str(name);
            // The buffer is bounded by the section's limit, far below 4 GiB.
            k.symbols.push((addr, start as u32, k.names.len() as u32));
        }
        k.symbols.sort_by_key(|s| s.0);
        k
    }

    /// The symbol holding `addr` (the last at or below it), as `%ps` prints it.
    pub fn name(&self, addr: u64) -> Option<&str> {
        let i = self.symbols.partition_point(|s| s.0 <= addr);
        let &(_, start, end) = self.symbols.get(i.checked_sub(1)?)?;
        Some(&self.names[start as usize..end as usize])
    }

    pub fn len(&self) -> usize {
        self.symbols.len()
    }
}

/// `printk_formats`: constant strings by address.
#[derive(Debug, Default)]
pub struct PrintkStrings(HashMap<u64, String>);

impl PrintkStrings {
    pub fn parse(text: &str) -> PrintkStrings {
        let mut map = HashMap::new();
        for line in text.lines() {
            let Some((addr, rest)) = line.split_once(':') else {
                continue;
            };
            let addr = addr.trim();
            let Ok(addr) = u64::from_str_radix(addr.strip_prefix("0x").unwrap_or(addr), 16) else {
                continue;
            };
            let rest = rest.trim();
            let Some(inner) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
                continue;
            };
            map.insert(addr, super::format::unescape(inner));
        }
        PrintkStrings(map)
    }

    pub fn get(&self, addr: u64) -> Option<&str> {
        self.0.get(&addr).map(String::as_str)
    }
}
