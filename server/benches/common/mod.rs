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
