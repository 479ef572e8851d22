//! How an error message quotes what it read: one line, bounded.

/// The longest token an error message quotes whole; longer ones are cut and marked.
pub const SHOWN_TOKEN_CHARS: usize = 60;

/// `token` quoted for an error message: as a Rust string literal (control characters and
/// quotes escaped, so the message stays on one line), cut after [`SHOWN_TOKEN_CHARS`]
/// characters with its full length in bytes noted.
pub fn shown(token: &str) -> String {
    match token.char_indices().nth(SHOWN_TOKEN_CHARS) {
        None => format!("{token:?}"),
        Some((cut, _)) => format!("{:?}... ({} bytes in all)", &token[..cut], token.len()),
    }
}
