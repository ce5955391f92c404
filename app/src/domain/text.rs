//! Bounding untrusted text for display: a log line, a model's answer, a stack dump.

/// Cuts `s` to at most `max` bytes on a character boundary; returns how many bytes it left
/// out (0 when it fit). Callers say the cut in their own words.
pub fn cut(s: &mut String, max: usize) -> usize {
    if s.len() <= max {
        return 0;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let left_out = s.len() - end;
    s.truncate(end);
    left_out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_a_character_boundary() {
        let mut s = "ééé".to_string(); // 6 bytes
        assert_eq!(cut(&mut s, 3), 4);
        assert_eq!(s, "é");
        let mut short = "ab".to_string();
        assert_eq!(cut(&mut short, 5), 0);
        assert_eq!(short, "ab");
        let mut none = "é".to_string();
        assert_eq!(cut(&mut none, 1), 2);
        assert_eq!(none, "");
    }
}
