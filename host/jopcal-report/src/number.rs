//! Numbers as the report prints them, in its tables and its plots alike:
//! signed, and with the sign of a value that rounds to zero dropped.

/// A number as printed (`-0.00`, `+0.0%`, `12.5`), with the sign of a
/// value that rounds to zero dropped: `-0.00%` reads as an error that is not there.
pub fn trim_zero(s: &str) -> String {
    match s.strip_prefix(['-', '+', '\u{2212}']) {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.' || c == '%') => rest.to_string(),
        _ => s.to_string(),
    }
}

/// `x` with its sign and `decimals` decimals, zero without a sign (ASCII,
/// for text files; the plots print `plots::minus_signs` of it).
pub fn signed(x: f64, decimals: usize) -> String {
    trim_zero(&format!("{x:+.decimals$}"))
}
