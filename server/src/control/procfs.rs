//! What Linux's /proc says about processes and sockets: liveness, identity (start time) and
//! who listens on a port. Parsing is separate from reading so it can be tested on text.

use std::path::Path;

/// A process's start time in clock ticks since boot (field 22 of `/proc/PID/stat`) and its
/// state letter. Start time tells a re-used pid from the process we launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    pub state: char,
    pub start_ticks: u64,
}

/// Parses `/proc/PID/stat`. The command name may contain spaces and parentheses, so fields
/// are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let after = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // after ")" : state is field 3 overall (index 0 here); starttime is field 22 (index 19).
    let state = fields.first()?.chars().next()?;
    let start_ticks = fields.get(19)?.parse().ok()?;
    Some(ProcStat { state, start_ticks })
}

pub fn stat(pid: i32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every live process whose process group is `pgid` (field 5 of `/proc/PID/stat`): an
/// engine's workers live in its group, and a stop is done only when all of them are gone.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|t| {
                    let after = &t[t.rfind(')')? + 1..];
                    let f: Vec<&str> = after.split_whitespace().collect();
                    let state = f.first()?.chars().next()?;
                    let group: i32 = f.get(2)?.parse().ok()?;
                    Some(group == pgid && state != 'Z' && state != 'X')
                })
                .unwrap_or(false)
        })
        .collect()
}

/// Alive means present and not a zombie waiting to be reaped.
pub fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
}

/// The process's short name (`comm`).
pub fn comm(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Seconds since boot, for turning start ticks into an uptime.
pub fn uptime_since_boot() -> Option<f64> {
    std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Clock ticks per second; Linux reports `starttime` in these (USER_HZ, 100 on every
/// mainstream architecture).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// How long a process has been running, from its start ticks.
pub fn process_uptime_s(start_ticks: u64) -> Option<u64> {
    let now = uptime_since_boot()?;
    let started = start_ticks as f64 / TICKS_PER_SECOND;
    Some((now - started).max(0.0) as u64)
}

/// Socket inodes listening on `port`, from the text of `/proc/net/tcp` or `/proc/net/tcp6`.
pub fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local = f.get(1)?;
            let state = f.get(3)?;
            let inode: u64 = f.get(9)?.parse().ok()?;
            let port_hex = local.rsplit(':').next()?;
            let p = u16::from_str_radix(port_hex, 16).ok()?;
            (p == port && *state == "0A").then_some(inode)
        })
        .collect()
}

/// Whether anything listens on `port` (IPv4 or IPv6), whoever owns it.
pub fn has_listener(port: u16) -> bool {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|t| std::fs::read_to_string(t).ok())
        .any(|text| !listening_inodes(&text, port).is_empty())
}

/// The process listening on `port`, if /proc lets us see it: (pid, name).
pub fn port_owner(port: u16) -> Option<(i32, String)> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            inodes.extend(listening_inodes(&text, port));
        }
    }
    if inodes.is_empty() {
        return None;
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if wanted.iter().any(|w| Path::new(w) == target) {
                    return Some((pid, comm(pid).unwrap_or_else(|| "?".into())));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_command_names() {
        let text = "1234 (python3 (vllm) x) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 987654 100000 2000 18446744073709551615";
        assert_eq!(
            parse_stat(text),
            Some(ProcStat {
                state: 'S',
                start_ticks: 987654
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn own_process_is_alive_and_has_a_start_time() {
        let pid = std::process::id() as i32;
        assert!(alive(pid));
        assert!(stat(pid).unwrap().start_ticks > 0);
        assert!(process_uptime_s(stat(pid).unwrap().start_ticks).is_some());
    }

    #[test]
    fn listening_sockets_by_port() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n   1: 0100007F:1F40 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4243 1\n";
        assert_eq!(listening_inodes(table, 8000), vec![4242]);
        assert!(listening_inodes(table, 8001).is_empty());
    }

    #[test]
    fn finds_the_owner_of_a_real_listener() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (pid, _) = port_owner(port).expect("owner found");
        assert_eq!(pid, std::process::id() as i32);
    }
}
