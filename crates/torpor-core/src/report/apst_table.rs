//! An APST table as a run's report and `torpor apst` carry it: every entry's fields and its raw
//! 64-bit form.

use crate::apst::{ApstTable, APST_ENTRIES};

/// `table` as `{"apste": 0|1, "entries": [{"ps", "itps", "itpt_ms", "raw"} × 32]}`; `raw` is the whole
/// 64-bit entry, reserved bits included.
pub fn table_json(table: &ApstTable) -> serde_json::Value {
    let entries: Vec<serde_json::Value> = (0..APST_ENTRIES)
        .map(|ps| {
            serde_json::json!({
                "ps": ps,
                "itps": table.itps(ps),
                "itpt_ms": table.itpt_ms(ps),
                "raw": table.entries[ps],
            })
        })
        .collect();
    serde_json::json!({ "apste": u8::from(table.apste), "entries": entries })
}
