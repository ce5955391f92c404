//! `roofline profile list | show | import | export`: launch profiles as `KEY=VALUE` files.

use super::{cli_actor, lang, OK, PROBLEM, USAGE};
use crate::context::Context;
use crate::profiles::ImportError;
use app::domain::profile::Severity;
use app::i18n::{tr_args, Lang};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    List,
    Show {
        name: String,
    },
    /// Import `profiles/<name>.env` (the name comes from the file name unless --name is given).
    Import {
        file: PathBuf,
        #[arg(long)]
        name: Option<String>,
    },
    /// Write a profile as KEY=VALUE (to stdout, or --out FILE).
    Export {
        name: String,
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

pub async fn run(ctx: &Context, command: ProfileCommand, json: bool) -> i32 {
    let lang = lang();
    // The profiles page's use-cases: the CLI lists, exports and imports through them.
    let profiles = crate::profiles::Profiles::new(ctx.clone());
    match command {
        ProfileCommand::List => match profiles.list().await {
            Ok(rows) => {
                if json {
                    let v: Vec<_> = rows
                        .iter()
                        .map(|r| serde_json::json!({"name": r.name, "engine": r.engine, "model": r.model, "updated_at": r.updated_at}))
                        .collect();
                    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
                } else {
                    for r in rows {
                        println!("{:<24} {:<16} {}", r.name, r.engine, r.model);
                    }
                }
                OK
            }
            Err(e) => {
                eprintln!("{e}");
                PROBLEM
            }
        },
        // The profile page's use-case: the text, the command the console executes (for a
        // container installation, the container CLI's `run`) and every issue, each naming
        // its field. A profile with an error (one that cannot start here) exits 2.
        ProfileCommand::Show { name } => match profiles.view(&name).await {
            Ok(view) => {
                let refused = view.issues.iter().any(|i| i.severity == Severity::Error);
                if json {
                    println!(
                        "{}",
                        serde_json::json!({
                            "profile": view.profile, "argv": view.argv, "simulated": view.simulated,
                            "issues": view.issues.iter().map(|i| serde_json::json!({
                                "field": i.field, "line": i.line, "severity": i.severity, "message": i.to_string(),
                            })).collect::<Vec<_>>(),
                        })
                    );
                } else {
                    print!("{}", view.env_text);
                    println!("# command: {}", app::domain::flagmap::display_argv(&view.argv));
                    for issue in &view.issues {
                        let level = if issue.severity == Severity::Error {
                            "error"
                        } else {
                            "warning"
                        };
                        eprintln!("{name}: {level}: {issue}");
                    }
                }
                if refused {
                    USAGE
                } else {
                    OK
                }
            }
            Err(e @ crate::profiles::ProfileError::NoSuchProfile(_)) => {
                eprintln!("{e}");
                USAGE
            }
            Err(e) => {
                eprintln!("{e}");
                PROBLEM
            }
        },
        ProfileCommand::Import { file, name } => {
            let name = name
                .or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .unwrap_or_default();
            // Read one byte past the bound: the import refuses a longer file naming its size,
            // without reading the rest of it.
            let text = match crate::models::read_regular(&file, crate::profiles::MAX_PROFILE_BYTES as u64 + 1) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("{}: {e}", file.display());
                    return USAGE;
                }
            };
            let source = file.display().to_string();
            match profiles.import(&cli_actor(), &name, &text, &source).await {
                Ok(imported) => {
                    for w in &imported.warnings {
                        eprintln!("{}", describe_issue(lang, &file, w));
                    }
                    println!("{} {name}", if imported.new { "imported" } else { "updated" });
                    OK
                }
                Err(ImportError::Refused(issues)) => {
                    for i in &issues {
                        eprintln!("{}", describe_issue(lang, &file, i));
                    }
                    USAGE
                }
                Err(ImportError::Internal(e)) => {
                    eprintln!("{e}");
                    PROBLEM
                }
            }
        }
        ProfileCommand::Export { name, out } => match profiles.text(&name).await {
            Ok(text) => match out {
                Some(path) => match std::fs::write(&path, text) {
                    Ok(()) => OK,
                    Err(e) => {
                        eprintln!("{}: {e}", path.display());
                        PROBLEM
                    }
                },
                None => {
                    print!("{text}");
                    OK
                }
            },
            Err(e @ crate::profiles::ProfileError::NoSuchProfile(_)) => {
                eprintln!("{e}");
                USAGE
            }
            Err(e) => {
                eprintln!("{e}");
                PROBLEM
            }
        },
    }
}

/// `file:line: FIELD: message` in the operator's language, as compilers print it.
fn describe_issue(lang: Lang, file: &std::path::Path, issue: &app::domain::profile::Issue) -> String {
    let args: Vec<(&str, app::i18n::Arg)> = issue
        .kind
        .args()
        .into_iter()
        .map(|(k, v)| (k, app::i18n::Arg::from(v)))
        .collect();
    let msg = tr_args(lang, &format!("profile-issue-{}", issue.kind.code()), &args);
    let level = if issue.severity == Severity::Error {
        "error"
    } else {
        "warning"
    };
    match issue.line {
        Some(l) => format!("{}:{l}: {level}: {}: {msg}", file.display(), issue.field),
        None => format!("{}: {level}: {}: {msg}", file.display(), issue.field),
    }
}
