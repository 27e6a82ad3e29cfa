//! Seconds as the lessons compare and show them.

/// Whether two planned delays are the same, allowing for rounding in the last bits.
///
/// ```
/// use kit_runner::secs::same_secs;
/// assert!(same_secs(0.1 + 0.2, 0.3));
/// assert!(same_secs(f64::NAN, f64::NAN));
/// assert!(!same_secs(0.25, 0.5));
/// ```
pub fn same_secs(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) || (a.is_nan() && b.is_nan())
}

/// Whether two lists of delays are the same (see [`same_secs`]).
pub fn same_waits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_secs(*x, *y))
}

/// A float list as people read it: `[0.25, 0.5]`, with `NaN` and `inf` spelled out.
pub fn fmt_secs(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|w| format!("{w:?}")).collect();
    format!("[{}]", items.join(", "))
}
