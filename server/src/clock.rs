//! Wall-clock time as the database and the browser keep it: Unix milliseconds.

/// Now, in Unix milliseconds (0 if the clock is before 1970).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The clock a feature reads through its context: the system's, or a fixed instant where a
/// test needs "now" to hold still.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    #[default]
    System,
    Fixed(i64),
}

impl Clock {
    /// Now, in Unix milliseconds.
    pub fn now_ms(self) -> i64 {
        match self {
            Clock::System => now_ms(),
            Clock::Fixed(ms) => ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_clock_holds_still_and_the_system_clock_moves_on() {
        assert_eq!(Clock::Fixed(1_700_000_000_000).now_ms(), 1_700_000_000_000);
        let before = now_ms();
        assert!(Clock::System.now_ms() >= before && before > 1_700_000_000_000);
    }
}
