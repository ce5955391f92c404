//! Several `roofline` processes opening one fresh data dir at the same moment (the console and
//! a CLI status poll, as the test script and operators' scripts do) must all get a database.

use crate::common::*;

#[test]
fn concurrent_processes_on_a_fresh_database_all_succeed() {
    for _ in 0..8 {
        let env = Env::new();
        let children: Vec<_> = (0..8)
            .map(|_| {
                std::process::Command::new(BIN)
                    .arg("--data")
                    .arg(env.data())
                    .args(["status", "--json"])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "a concurrent open failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
