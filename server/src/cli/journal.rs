//! `roofline journal list | verify`: the change journal from the shell.

use super::{OK, PROBLEM};
use crate::context::Context;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum JournalCommand {
    /// Newest first.
    List {
        #[arg(long)]
        profile: Option<String>,
        /// Matches subject, kind, who, reason or detail.
        #[arg(long)]
        query: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: i64,
    },
    /// Walk the hash chain; exit 1 at the first entry that does not hold.
    Verify,
}

pub async fn run(ctx: &Context, command: JournalCommand, json: bool) -> i32 {
    let journal = ctx.journal.clone();
    match command {
        JournalCommand::List { profile, query, limit } => {
            match journal
                .list(profile.as_deref(), query.as_deref(), limit.clamp(1, 10_000))
                .await
            {
                Ok(entries) if json => {
                    println!("{}", serde_json::to_string(&entries).unwrap_or_default());
                    OK
                }
                Ok(entries) => {
                    for e in entries {
                        println!(
                            "#{} {} {} {} {} {} {}",
                            e.seq,
                            e.at,
                            e.who,
                            e.kind,
                            e.subject,
                            if e.reason.is_empty() {
                                "(no reason given)".to_string()
                            } else {
                                format!("\"{}\"", e.reason)
                            },
                            e.detail
                        );
                    }
                    OK
                }
                Err(e) => {
                    eprintln!("{e}");
                    PROBLEM
                }
            }
        }
        JournalCommand::Verify => match journal.verify().await {
            Ok(v) => {
                if json {
                    println!("{}", serde_json::json!(v));
                }
                match v.broken {
                    None => {
                        if !json {
                            println!("journal intact: {} entries, hash chain verified", v.entries);
                        }
                        OK
                    }
                    Some((seq, why)) => {
                        if !json {
                            println!(
                                "journal BROKEN at entry #{seq}: {why} ({} entries before it hold)",
                                v.entries
                            );
                        }
                        PROBLEM
                    }
                }
            }
            Err(e) => {
                eprintln!("{e}");
                PROBLEM
            }
        },
    }
}
