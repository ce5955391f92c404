//! Engine log files: rotation on each start (the previous run's log is kept, never
//! overwritten) and reading the tail without loading a huge file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Moves `engine.log` to `engine.log.1` so the failed run's log survives a new start.
pub fn rotate(path: &Path) -> std::io::Result<()> {
    if path.exists() {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        std::fs::rename(path, old)?;
    }
    Ok(())
}

/// The last `cap` bytes of a file, decoded lossily (engines print progress bars and partial
/// UTF-8), and whether the start was cut off (so the first line may be partial).
pub fn read_last(path: &Path, cap: u64) -> std::io::Result<(String, bool)> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(cap);
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    Ok((String::from_utf8_lossy(&buf).into_owned(), start > 0))
}

/// The last `n` lines of text read by [`read_last`], cleaned for display.
pub fn last_lines(text: &str, cut: bool, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(clean_line).collect();
    if cut && !lines.is_empty() {
        lines.remove(0); // a partial line
    }
    let skip = lines.len().saturating_sub(n);
    lines.split_off(skip)
}

/// The last `n` lines of a file; reads at most the final few MiB.
pub fn tail(path: &Path, n: usize) -> std::io::Result<Vec<String>> {
    let (text, cut) = read_last(path, 4 << 20)?;
    Ok(last_lines(&text, cut, n))
}

/// How much of the log one read takes.
const READ_CHUNK: u64 = 1 << 20;
/// The longest line shown; a longer one is cut (its length noted), so one huge line (a
/// tensor dump, a base64 blob) neither stalls the stream nor floods the page.
pub const MAX_LINE: usize = 16 << 10;

/// Reads what was appended since `offset`; returns the complete lines and the new offset.
/// A file shorter than `offset` was rotated: reading restarts at 0 and `reset` is true. A
/// line longer than a whole read is passed on cut, and reading moves past it.
pub fn read_since(path: &Path, offset: u64) -> std::io::Result<(Vec<String>, u64, bool)> {
    read_since_at_most(path, offset, READ_CHUNK)
}

/// [`read_since`] taking at most `chunk` bytes (the event streams take less per event: what
/// they hold for a reader that stopped is bounded by it).
pub fn read_since_at_most(path: &Path, offset: u64, chunk: u64) -> std::io::Result<(Vec<String>, u64, bool)> {
    let chunk = chunk.max(MAX_LINE as u64);
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    let (from, reset) = if len < offset { (0, true) } else { (offset, false) };
    f.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::new();
    f.take(chunk).read_to_end(&mut buf)?;
    // Keep an unterminated last line for the next read, unless it fills the whole read.
    let complete = match buf.iter().rposition(|b| *b == b'\n') {
        Some(p) => p + 1,
        None if buf.len() as u64 == chunk => buf.len(),
        None => 0,
    };
    let text = String::from_utf8_lossy(&buf[..complete]);
    Ok((
        text.lines().map(clean_line).map(cut_line).collect(),
        from + complete as u64,
        reset,
    ))
}

/// Cuts a line to [`MAX_LINE`] bytes (on a character boundary), noting what was left out.
fn cut_line(mut line: String) -> String {
    let len = line.len();
    if app::domain::text::cut(&mut line, MAX_LINE) > 0 {
        line.push_str(&format!(" … [line cut: {len} bytes]"));
    }
    line
}

/// Carriage-return progress bars keep only their final state.
fn clean_line(line: &str) -> String {
    line.rsplit('\r').find(|s| !s.is_empty()).unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Issue 11: a line over 1 MiB stalled the log stream for the rest of the run.
    #[test]
    fn a_huge_line_is_cut_and_the_stream_moves_on() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("engine.log");
        let mut f = File::create(&p).unwrap();
        writeln!(f, "before").unwrap();
        writeln!(f, "{}", "x".repeat(3 << 20)).unwrap();
        writeln!(f, "after").unwrap();
        drop(f);
        let mut offset = 0;
        let mut lines = Vec::new();
        for _ in 0..10 {
            let (new, next, _) = read_since(&p, offset).unwrap();
            lines.extend(new);
            offset = next;
        }
        assert_eq!(lines.first().map(String::as_str), Some("before"));
        assert_eq!(
            lines.last().map(String::as_str),
            Some("after"),
            "the stream got past the line"
        );
        assert!(lines.iter().all(|l| l.len() < MAX_LINE + 64), "lines are cut");
        assert!(lines.iter().any(|l| l.contains("[line cut:")));
    }

    #[test]
    fn tail_rotation_and_incremental_reads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("engine.log");
        let mut f = File::create(&p).unwrap();
        for i in 0..100 {
            writeln!(f, "line {i}").unwrap();
        }
        write!(f, "bar 10%\rbar 100%\npartial").unwrap();
        drop(f);
        let t = tail(&p, 3).unwrap();
        assert_eq!(t, vec!["line 99", "bar 100%", "partial"]);
        let (lines, off, reset) = read_since(&p, 0).unwrap();
        assert_eq!(lines.len(), 101);
        assert!(!reset);
        let (lines, off2, _) = read_since(&p, off).unwrap();
        assert!(lines.is_empty());
        assert_eq!(off, off2);
        rotate(&p).unwrap();
        assert!(dir.path().join("engine.log.1").exists());
        std::fs::write(&p, "new\n").unwrap();
        let (lines, _, reset) = read_since(&p, off).unwrap();
        assert!(reset);
        assert_eq!(lines, vec!["new"]);
    }
}
