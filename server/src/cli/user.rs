//! `roofline user ...`: accounts from the host's shell, for scripted setup and for the admin
//! who is locked out. Whoever can run this can read the database anyway; passwords come from
//! standard input, never from argv (which other users can see in `ps`).

use crate::accounts::{Accounts, AuthError};
use app::domain::auth::Role;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Creates an account; the password is read from standard input (one line).
    Add {
        name: String,
        #[arg(long, default_value = "viewer")]
        role: Role,
    },
    /// Lists accounts with their roles.
    List,
    /// Changes an account: role, disabled or enabled, or a new password from standard input.
    Set {
        name: String,
        #[arg(long)]
        role: Option<Role>,
        #[arg(long, conflicts_with = "enable")]
        disable: bool,
        #[arg(long)]
        enable: bool,
        /// Read a new password from standard input.
        #[arg(long)]
        password_stdin: bool,
    },
}

fn read_password() -> anyhow::Result<String> {
    use anyhow::Context as _;
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("reading the password from standard input")?;
    let pw = line.trim_end_matches(['\n', '\r']).to_string();
    if pw.is_empty() {
        anyhow::bail!(
            "password: give it on standard input (e.g. `read -rs PW; echo \"$PW\" | roofline user add NAME`)"
        );
    }
    Ok(pw)
}

/// Runs one `user` command; returns the exit code (2 for bad input, naming it).
pub async fn run(accounts: &Accounts, journal: &crate::journal::Journal, command: UserCommand, json: bool) -> i32 {
    let who = super::cli_actor();
    let fail = |e: String| {
        eprintln!("roofline user: {e}");
        2
    };
    match command {
        UserCommand::Add { name, role } => {
            let pw = match read_password() {
                Ok(p) => p,
                Err(e) => return fail(format!("{e:#}")),
            };
            match accounts.create(&name, &pw, role).await {
                Ok(()) => {
                    journal
                        .record(
                            &who,
                            "account-created",
                            &name,
                            "roofline user add",
                            serde_json::json!({"role": role}),
                        )
                        .await;
                    println!("created {name} ({})", role.as_str());
                    0
                }
                Err(AuthError::Sqlx(e)) => {
                    eprintln!("roofline user: {e}");
                    1
                }
                Err(e) => fail(e.to_string()),
            }
        }
        UserCommand::List => match accounts.list().await {
            Ok(rows) if json => {
                println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
                0
            }
            Ok(rows) => {
                for r in rows {
                    println!(
                        "{:<24} {:<9} {}{}",
                        r.name,
                        r.role.as_str(),
                        r.created_at,
                        if r.disabled { "  disabled" } else { "" }
                    );
                }
                0
            }
            Err(e) => {
                eprintln!("roofline user: {e}");
                1
            }
        },
        UserCommand::Set {
            name,
            role,
            disable,
            enable,
            password_stdin,
        } => {
            let pw = if password_stdin {
                match read_password() {
                    Ok(p) => Some(p),
                    Err(e) => return fail(format!("{e:#}")),
                }
            } else {
                None
            };
            let disabled = if disable {
                Some(true)
            } else if enable {
                Some(false)
            } else {
                None
            };
            match accounts.update(&name, role, disabled, pw.as_deref()).await {
                Ok(()) => {
                    journal
                        .record(
                            &who,
                            "account-changed",
                            &name,
                            "roofline user set",
                            serde_json::json!({"role": role, "disabled": disabled, "password_reset": pw.is_some()}),
                        )
                        .await;
                    println!("updated {name}");
                    0
                }
                Err(AuthError::Sqlx(e)) => {
                    eprintln!("roofline user: {e}");
                    1
                }
                Err(e) => fail(e.to_string()),
            }
        }
    }
}
