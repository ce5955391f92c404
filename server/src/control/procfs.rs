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

/// One live process as `/proc/PID/stat` describes it: enough to tell an engine's process tree
/// (parent, process group) and to prove identity later (start time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcEntry {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub state: char,
    pub start_ticks: u64,
}

/// Parses the fields [`ProcEntry`] needs from `/proc/PID/stat` (fields counted from the last
/// `)`, as in [`parse_stat`]).
pub fn parse_entry(pid: i32, text: &str) -> Option<ProcEntry> {
    let after = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    Some(ProcEntry {
        pid,
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start_ticks: f.get(19)?.parse().ok()?,
    })
}

/// Every live (not zombie) process visible in /proc.
pub fn processes() -> Vec<ProcEntry> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| parse_entry(pid, &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?))
        .filter(|p| p.state != 'Z' && p.state != 'X')
        .collect()
}

/// Every live process whose process group is `pgid` (field 5 of `/proc/PID/stat`): an
/// engine's workers live in its group, and a stop is done only when all of them are gone.
pub fn group_members(pgid: i32) -> Vec<i32> {
    processes()
        .into_iter()
        .filter(|p| p.pgrp == pgid)
        .map(|p| p.pid)
        .collect()
}

/// The processes of an engine's tree in `table`: its process group (which outlives the leader:
/// Linux reuses no pid while a group carries it as its id) and every descendant of `root`,
/// which may have moved to a group of its own. Only processes started no earlier than the root
/// count (a pid or group id seen before the engine started is not the engine's).
pub fn tree_in(table: &[ProcEntry], root: i32, root_start_ticks: u64) -> Vec<ProcEntry> {
    // A live process with the root's pid but another start time means the pid was reused: the
    // kernel reuses no pid while a group carries it, so the engine's group is gone, and any
    // group numbered so now is someone else's.
    if table.iter().any(|p| p.pid == root && p.start_ticks != root_start_ticks) {
        return Vec::new();
    }
    let mut found: Vec<ProcEntry> = table
        .iter()
        .filter(|p| (p.pgrp == root || p.pid == root) && p.start_ticks >= root_start_ticks)
        .cloned()
        .collect();
    // Descendants by parent links; each pid is visited once, so a table can never loop it.
    let mut visited = std::collections::HashSet::from([root]);
    let mut frontier: Vec<i32> = vec![root];
    while let Some(parent) = frontier.pop() {
        for p in table
            .iter()
            .filter(|p| p.ppid == parent && p.start_ticks >= root_start_ticks)
        {
            if visited.insert(p.pid) {
                found.push(p.clone());
                frontier.push(p.pid);
            }
        }
    }
    found.sort_by_key(|p| p.pid);
    found.dedup_by_key(|p| p.pid);
    found
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

    fn entry(pid: i32, ppid: i32, pgrp: i32, start_ticks: u64) -> ProcEntry {
        ProcEntry {
            pid,
            ppid,
            pgrp,
            state: 'S',
            start_ticks,
        }
    }

    #[test]
    fn an_engine_tree_is_its_group_and_its_descendants() {
        // vLLM: API server 100 (leader) -> EngineCore 101 -> Worker 102, all in group 100; a
        // helper 103 that left for a session of its own; an unrelated 200; 300, an older
        // process that happens to sit in a group numbered 100 before the engine started.
        let table = vec![
            entry(100, 1, 100, 500),
            entry(101, 100, 100, 510),
            entry(102, 101, 100, 520),
            entry(103, 101, 103, 530),
            entry(104, 103, 103, 540),
            entry(200, 1, 200, 100),
            entry(300, 1, 100, 10),
        ];
        let pids = |v: Vec<ProcEntry>| v.into_iter().map(|p| p.pid).collect::<Vec<_>>();
        assert_eq!(pids(tree_in(&table, 100, 500)), vec![100, 101, 102, 103, 104]);
        // The leader killed: its children are re-parented to init, the group still names them.
        let orphaned: Vec<ProcEntry> = table
            .iter()
            .filter(|p| p.pid != 100)
            .map(|p| {
                if p.ppid == 100 {
                    entry(p.pid, 1, p.pgrp, p.start_ticks)
                } else {
                    p.clone()
                }
            })
            .collect();
        assert_eq!(pids(tree_in(&orphaned, 100, 500)), vec![101, 102]);
        // The pid reused by a new group leader (this could be the console or a test itself):
        // nothing of it, its group or its children is the engine's.
        let reused = vec![
            entry(100, 1, 100, 900),
            entry(101, 100, 100, 910),
            entry(200, 1, 200, 100),
        ];
        assert!(tree_in(&reused, 100, 500).is_empty());
    }

    #[test]
    fn parse_entry_reads_parent_and_group() {
        let text =
            "1234 (VLLM::EngineCore) S 1200 1200 1200 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 987654 100000 2000";
        assert_eq!(parse_entry(1234, text), Some(entry(1234, 1200, 1200, 987654)));
        assert_eq!(parse_entry(1, "1 (x) S"), None);
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
