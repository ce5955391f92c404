//! What every bench reads from its command line.
#![allow(dead_code)]

/// The value after `name` on the command line.
pub fn arg_text(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The value after `name`, parsed, else `default`.
pub fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    arg_text(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Resident set size of a process, in MiB.
pub fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

/// The `p` quantile of sorted figures (NaN when there are none).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((p * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1)]
}
