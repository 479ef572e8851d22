//! A policy's variants as users spell them: one table per policy of `(spelling, variant)`
//! pairs, the canonical spelling of each variant first. The cpuidle and cpufreq governors read
//! their names through it, so both refuse an unknown name the same way.

/// The variant spelled `name` in `table`; an error naming `what` and every spelling otherwise.
pub fn parse<T: Copy>(
    table: &[(&'static str, T)],
    name: &str,
    what: &'static str,
) -> Result<T, UnknownName> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, v)| v)
        .ok_or_else(|| UnknownName {
            what,
            name: name.to_string(),
            known: table.iter().map(|(n, _)| *n).collect(),
        })
}

/// A name no variant of its table has; the message lists the names there are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {}; expected one of {}", torpor_sim::text::shown(.name), .known.join(", "))]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
    pub known: Vec<&'static str>,
}

/// Where a name's error travels as text (a scenario line's message).
impl From<UnknownName> for String {
    fn from(e: UnknownName) -> String {
        e.to_string()
    }
}

/// The first spelling of `variant` in `table` (every variant has one).
pub fn canonical<T: Copy + PartialEq>(table: &[(&'static str, T)], variant: T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| *v == variant)
        .map(|(n, _)| *n)
        .expect("every variant is named")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[(&str, u8)] = &[("a", 1), ("a@2", 1), ("b", 2)];

    #[test]
    fn spellings_resolve_and_the_first_is_canonical() {
        assert_eq!(parse(TABLE, "a@2", "thing"), Ok(1));
        assert_eq!(canonical(TABLE, 1), "a");
        assert_eq!(
            parse(TABLE, "c", "thing").unwrap_err().to_string(),
            "unknown thing \"c\"; expected one of a, a@2, b"
        );
    }
}
