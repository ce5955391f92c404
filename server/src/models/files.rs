//! Opening a model directory's files as untrusted input: a path the check walked may have been
//! swapped for a FIFO or a device since. Used by hashing and by the checks alike.

use std::path::Path;

/// Opens a file for reading only if it is a regular file. Opened non-blocking, so a file
/// swapped for a FIFO after the walk cannot hang the check (a FIFO's open waits for a writer);
/// the type is then read from the open descriptor, not from the path.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    if f.metadata()?.is_file() {
        Ok(f)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ))
    }
}

/// At most `cap` bytes of a regular file as text (a FIFO, a device or a directory is refused
/// rather than read or waited on).
pub fn read_regular(path: &Path, cap: u64) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_regular(path)?.take(cap).read_to_string(&mut text)?;
    Ok(text)
}
