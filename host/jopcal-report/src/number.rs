//! Numbers as the report prints them, in its tables and its plots alike:
//! signed, with the sign of a value that rounds to zero dropped, and whole
//! numbers of cycles with their digits grouped.

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

/// `1234567.4` as `1,234,567`.
pub fn thousands(v: f64) -> String {
    let n = v.round() as i128;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(-350.0), "-350");
        assert_eq!(thousands(0.0), "0");
    }
}
