//! Wall-clock time as the database and the browser keep it: Unix milliseconds.

/// Now, in Unix milliseconds (0 if the clock is before 1970).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A moment as the database's text timestamps hold it (`2026-12-06T16:00:00Z`, UTC, to the
/// second): bound from here rather than written by each back end's own date function.
pub fn utc_text(ms: i64) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_string())
}

/// Now as the database's text timestamps hold it.
pub fn now_text() -> String {
    utc_text(now_ms())
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

    #[test]
    fn database_timestamps_are_utc_to_the_second() {
        assert_eq!(utc_text(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_text(1_796_572_800_999), "2026-12-06T16:00:00Z");
        assert_eq!(utc_text(i64::MAX), "1970-01-01T00:00:00Z");
    }
}
