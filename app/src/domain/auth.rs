//! Accounts and roles as rules: who may call what, what a valid user name and password are.
//!
//! The table of server functions and their roles lives here, not next to each function, so
//! one place answers "who can do this" and the server refuses anything the table does not
//! name (deny by default). The server's middleware and the tests both read it.

use serde::{Deserialize, Serialize};

/// What an account may do; each role includes the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads everything: fleet, engines, charts, profiles, incidents, journal.
    Viewer,
    /// Runs engines and incidents, proposes profile changes, runs gates, rolls back.
    Operator,
    /// Also approves or sends back other people's profile changes.
    Approver,
    /// Also manages accounts.
    Admin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Operator, Role::Approver, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Approver => "approver",
            Role::Admin => "admin",
        }
    }

    /// Whether this role includes `needed`.
    pub fn allows(self, needed: Role) -> bool {
        self >= needed
    }
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("role `{s}`: expected one of viewer, operator, approver, admin"))
    }
}

/// Who may call a server function: nobody needs to be signed in, or at least this role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Signing in and first-run setup; they check their own secrets.
    Public,
    Role(Role),
}

/// Every server function by endpoint name, with the access it needs. A server function that
/// is missing here is refused for everybody (and a test fails).
pub const SERVER_FNS: &[(&str, Access)] = &[
    // Accounts.
    ("login", Access::Public),
    ("setup_admin", Access::Public),
    ("whoami", Access::Public),
    ("logout", Access::Role(Role::Viewer)),
    ("change_password", Access::Role(Role::Viewer)),
    ("list_accounts", Access::Role(Role::Admin)),
    ("create_account", Access::Role(Role::Admin)),
    ("update_account", Access::Role(Role::Admin)),
    // Reading.
    ("list_engines", Access::Role(Role::Viewer)),
    ("get_engine", Access::Role(Role::Viewer)),
    ("list_profiles", Access::Role(Role::Viewer)),
    ("get_profile", Access::Role(Role::Viewer)),
    ("list_bench_runs", Access::Role(Role::Viewer)),
    ("get_last_smoke", Access::Role(Role::Viewer)),
    ("get_series", Access::Role(Role::Viewer)),
    ("list_incidents", Access::Role(Role::Viewer)),
    ("get_incident", Access::Role(Role::Viewer)),
    ("list_models", Access::Role(Role::Viewer)),
    ("get_vram_check", Access::Role(Role::Viewer)),
    ("predict_profile_vram", Access::Role(Role::Viewer)),
    ("list_host_gpus", Access::Role(Role::Viewer)),
    ("get_model_verify", Access::Role(Role::Viewer)),
    ("start_model_verify", Access::Role(Role::Operator)),
    ("get_startup_history", Access::Role(Role::Viewer)),
    ("get_state_timeline", Access::Role(Role::Viewer)),
    ("list_hosts", Access::Role(Role::Viewer)),
    ("get_job", Access::Role(Role::Viewer)),
    ("list_jobs", Access::Role(Role::Viewer)),
    ("list_journal", Access::Role(Role::Viewer)),
    ("verify_journal", Access::Role(Role::Viewer)),
    ("get_profile_editor", Access::Role(Role::Viewer)),
    ("list_changes", Access::Role(Role::Viewer)),
    ("get_change", Access::Role(Role::Viewer)),
    // Operating.
    ("run_engine_action", Access::Role(Role::Operator)),
    // An engine action on another host of the fleet, performed there.
    ("request_host_action", Access::Role(Role::Operator)),
    ("start_smoke", Access::Role(Role::Operator)),
    ("start_bench", Access::Role(Role::Operator)),
    ("open_incident", Access::Role(Role::Operator)),
    ("incident_action", Access::Role(Role::Operator)),
    ("incident_note", Access::Role(Role::Operator)),
    ("resolve_incident", Access::Role(Role::Operator)),
    ("save_postmortem", Access::Role(Role::Operator)),
    // Runs the installed engine's --help: a process start, so not for viewers.
    ("check_profile_flags", Access::Role(Role::Operator)),
    ("editor_flag_help", Access::Role(Role::Operator)),
    ("upgrade_check", Access::Role(Role::Operator)),
    ("propose_change", Access::Role(Role::Operator)),
    ("withdraw_change", Access::Role(Role::Operator)),
    ("comment_change", Access::Role(Role::Operator)),
    ("start_change_gate", Access::Role(Role::Operator)),
    ("rollback_change", Access::Role(Role::Operator)),
    // Reviewing.
    ("review_change", Access::Role(Role::Approver)),
];

/// The access a server function endpoint needs, `None` when it is not in the table.
pub fn access_for(endpoint: &str) -> Option<Access> {
    SERVER_FNS.iter().find(|(e, _)| *e == endpoint).map(|(_, a)| *a)
}

/// Why a user name or password is not accepted; the UI names the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("user name: 1 to 64 characters of a-z, 0-9, '.', '_', '-', starting with a letter")]
    BadName,
    #[error("password: at least {MIN_PASSWORD} characters")]
    ShortPassword,
    #[error("password: at most 1024 characters")]
    LongPassword,
    #[error("password: must not be the user name")]
    PasswordIsName,
}

/// The shortest password accepted. Long passphrases beat composition rules (NIST SP 800-63B).
pub const MIN_PASSWORD: usize = 12;

pub fn check_name(name: &str) -> Result<(), CredentialError> {
    let ok = (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(CredentialError::BadName)
    }
}

pub fn check_password(name: &str, password: &str) -> Result<(), CredentialError> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD {
        return Err(CredentialError::ShortPassword);
    }
    if chars > 1024 {
        return Err(CredentialError::LongPassword);
    }
    if password.eq_ignore_ascii_case(name) {
        return Err(CredentialError::PasswordIsName);
    }
    Ok(())
}

/// Only same-site paths are followed after signing in or switching language (no open
/// redirect).
pub fn safe_next(next: Option<String>) -> String {
    match next {
        // Browsers drop tabs and newlines from URLs: `/\t/evil.example` is `//evil.example`.
        Some(n)
            if n.starts_with('/')
                && !n.starts_with("//")
                && !n.contains('\\')
                && !n.chars().any(|c| c.is_control() || c.is_whitespace()) =>
        {
            n
        }
        _ => "/".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/changes/3".into())), "/changes/3");
        assert_eq!(safe_next(Some("//evil.example/x".into())), "/");
        assert_eq!(safe_next(Some("https://evil.example".into())), "/");
        assert_eq!(safe_next(Some("/\\evil".into())), "/");
        assert_eq!(safe_next(None), "/");
        assert_eq!(safe_next(Some("/\t/evil.example".into())), "/");
        assert_eq!(safe_next(Some("/\n/evil.example".into())), "/");
        assert_eq!(safe_next(Some("/ /evil.example".into())), "/");
    }

    #[test]
    fn roles_include_the_ones_before() {
        assert!(Role::Admin.allows(Role::Approver));
        assert!(Role::Approver.allows(Role::Operator));
        assert!(!Role::Operator.allows(Role::Approver));
        assert!(!Role::Viewer.allows(Role::Operator));
        assert_eq!("approver".parse::<Role>(), Ok(Role::Approver));
        assert!("root".parse::<Role>().unwrap_err().contains("root"));
    }

    #[test]
    fn table_names_each_endpoint_once() {
        let mut names: Vec<_> = SERVER_FNS.iter().map(|(n, _)| *n).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "an endpoint is listed twice");
        assert_eq!(access_for("review_change"), Some(Access::Role(Role::Approver)));
        assert_eq!(access_for("nope"), None);
    }

    #[test]
    fn credentials_name_the_field() {
        assert!(check_name("alice").is_ok());
        assert!(check_name("a.b-c_1").is_ok());
        assert_eq!(check_name("Alice"), Err(CredentialError::BadName));
        assert_eq!(check_name("1abc"), Err(CredentialError::BadName));
        assert_eq!(check_name(""), Err(CredentialError::BadName));
        assert_eq!(check_password("alice", "short"), Err(CredentialError::ShortPassword));
        assert_eq!(
            check_password("alice1234567", "ALICE1234567"),
            Err(CredentialError::PasswordIsName)
        );
        assert!(check_password("alice", "correct horse battery").is_ok());
        assert!(CredentialError::ShortPassword.to_string().starts_with("password"));
    }
}
