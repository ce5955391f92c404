//! Review and approval of profile changes: the workflow (propose, review, withdraw, comment,
//! start the gate, roll back) over the change store, and the gate runner (`gate.rs`) that
//! makes an approved change active.
//!
//! The rules (who may do what, in which state) are `app::domain::review`; this module keeps the
//! record, applies the rules to it, and writes every step into the change journal.

mod gate;
pub mod store;

use crate::context::Context;
use app::api::{Caller, ChangeView};
use app::domain::envfile::{env_diff, key_changes};
use app::domain::profile::Profile;
use app::domain::review::{self, ChangeAction, ChangeState, Facts};
use store::{ChangeRow, ChangeStore};

/// The review service over one data directory.
#[derive(Clone)]
pub struct Changes {
    ctx: Context,
    store: ChangeStore,
}

/// Why a change could not be read or moved, in words that name the change, field or rule.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    #[error("no change #{0}")]
    NotFound(i64),
    #[error("no profile named {0:?}")]
    NoSuchProfile(String),
    #[error("{profile}: no engine installation named {engine:?} on this host")]
    NoSuchEngine { profile: String, engine: String },
    /// The review rules refuse the caller (role, self-approval, not the author).
    #[error("{0}")]
    Forbidden(String),
    /// The text, the state or the content the reviewer saw refuse the step.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

fn store_error(e: store::StoreError) -> ChangeError {
    match e {
        store::StoreError::NotFound(id) => ChangeError::NotFound(id),
        other => ChangeError::Internal(other.into()),
    }
}

/// The SHA-256 (hex) of a change's candidate profile text, which is stored in canonical form
/// (`Profile::to_env`): what the review page shows and an approval carries back.
pub fn content_hash(env: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(env.as_bytes()))
}

/// The first 12 hex digits, as the page shows them.
fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

fn moved_on(id: i64) -> ChangeError {
    ChangeError::Invalid(format!("change #{id} moved on while you looked at it; reload the page"))
}

fn refused(e: review::ReviewError) -> ChangeError {
    match e {
        review::ReviewError::Role { .. }
        | review::ReviewError::SelfApproval
        | review::ReviewError::NotAuthor { .. } => ChangeError::Forbidden(e.to_string()),
        other => ChangeError::Invalid(other.to_string()),
    }
}

/// A profile file checked the way an import is: errors name the field and line.
pub fn parse_profile(name: &str, env_text: &str) -> Result<Profile, ChangeError> {
    crate::profiles::parse(name, env_text).map_err(|e| match e {
        crate::profiles::ProfileError::NoSuchProfile(p) => ChangeError::NoSuchProfile(p),
        other => ChangeError::Invalid(other.to_string()),
    })
}

impl Changes {
    /// A change's timeline entry. Written after the state moved, so a failed write cannot
    /// undo the move and is not the caller's error: it is logged naming the change and the
    /// entry, never dropped silently.
    async fn event(&self, id: i64, who: &str, kind: &str, text: &str) {
        if let Err(e) = self.store.add_event(id, who, kind, text).await {
            tracing::error!(change = id, kind, error = %e, "the change's timeline entry is not written");
        }
    }

    /// What the console would execute for `env_text` as profile `name` (the container CLI's
    /// `run` for a container installation); empty when it does not parse or names no
    /// installation of this host: the review then shows the texts alone.
    fn launch_argv(&self, name: &str, env_text: &str) -> Vec<String> {
        let Ok(p) = parse_profile(name, env_text) else {
            return Vec::new();
        };
        let Some(install) = self.ctx.data.engine(&p.engine) else {
            return Vec::new();
        };
        self.ctx
            .control
            .launch_argv(&p.engine, install, &p)
            .map(|(_, launch)| launch)
            .unwrap_or_default()
    }

    pub fn new(ctx: Context) -> Self {
        let store = ChangeStore::new(ctx.pool.clone());
        Self { ctx, store }
    }

    /// The candidate profile text of change `id`, which must be about `profile` (the editor
    /// reworking a change starts from it).
    pub async fn candidate_env(&self, id: i64, profile: &str) -> Result<String, ChangeError> {
        let row = self.store.get(id).await.map_err(store_error)?;
        if row.profile != profile {
            return Err(ChangeError::Invalid(format!(
                "change #{id} is about {}, not {profile}",
                row.profile
            )));
        }
        Ok(row.env)
    }

    /// Marks gates cut off by a console restart as failed (they cannot report any more).
    pub async fn recover(&self) {
        let Ok(ids) = self.store.interrupted_gates().await else {
            return;
        };
        for id in ids {
            if let Ok(true) = self
                .store
                .transition(id, ChangeState::Gating, ChangeState::GateFailed)
                .await
            {
                self.event(id, "console", "gate-failed", "the console restarted while the gate ran")
                    .await;
            }
        }
    }

    async fn active_env(&self, profile: &str) -> Result<String, ChangeError> {
        Ok(self
            .ctx
            .store
            .get(profile)
            .await
            .map_err(|e| ChangeError::Internal(e.into()))?
            .ok_or_else(|| ChangeError::NoSuchProfile(profile.to_string()))?
            .profile
            .to_env())
    }

    async fn facts<'a>(&self, row: &'a ChangeRow, caller: &'a Caller) -> Result<Facts<'a>, ChangeError> {
        let active = self.active_env(&row.profile).await?;
        let newest = self.store.newest_active(&row.profile).await.map_err(store_error)?;
        Ok(Facts {
            state: row.state,
            author: &row.author,
            actor: &caller.name,
            role: caller.role,
            stale: active != row.base_env,
            newest_active: newest == Some(row.id),
        })
    }

    async fn journal(&self, who: &str, kind: &str, row: &ChangeRow, reason: &str, extra: serde_json::Value) {
        let mut detail = serde_json::json!({
            "change": row.id,
            "author": row.author,
            "diff": env_diff(&row.base_env, &row.env),
            "content_hash": content_hash(&row.env),
        });
        if let (Some(d), serde_json::Value::Object(extra)) = (detail.as_object_mut(), extra) {
            d.extend(extra);
        }
        self.ctx.record(who, kind, &row.profile, reason, detail).await;
    }

    /// Applies one step's state change, refusing if somebody else moved the change first.
    async fn transition(&self, row: &ChangeRow, to: ChangeState) -> Result<(), ChangeError> {
        if self
            .store
            .transition(row.id, row.state, to)
            .await
            .map_err(store_error)?
        {
            Ok(())
        } else {
            Err(ChangeError::Invalid(format!(
                "change #{} moved on while you looked at it; reload the page",
                row.id
            )))
        }
    }
}

/// The use-cases, in the order of a change's life.
impl Changes {
    pub async fn list(&self, profile: Option<String>) -> Result<Vec<app::api::ChangeSummary>, ChangeError> {
        Ok(self
            .store
            .list(profile.as_deref())
            .await
            .map_err(store_error)?
            .iter()
            .map(ChangeRow::summary)
            .collect())
    }

    pub async fn get(&self, caller: Caller, id: i64) -> Result<ChangeView, ChangeError> {
        let row = self.store.get(id).await.map_err(store_error)?;
        let facts = self.facts(&row, &caller).await?;
        // The command lines and flags are left to the page's door (`hosts::route`), which
        // renders them here or on the host that runs the engine; the gate's own reads of a
        // change need none of them.
        Ok(ChangeView {
            summary: row.summary(),
            diff: env_diff(&row.base_env, &row.env),
            keys: key_changes(&row.base_env, &row.env),
            argv_before: Vec::new(),
            argv_after: Vec::new(),
            extra_flags: Vec::new(),
            rendered_by: None,
            render_note: None,
            stale: facts.stale && row.state.open(),
            allowed: review::allowed(&facts),
            events: self.store.events(id).await.map_err(store_error)?,
            gate: row.gate.clone(),
            thresholds: self.ctx.data.config.gate.clone(),
            content_hash: content_hash(&row.env),
            base_env: row.base_env,
            env: row.env,
        })
    }

    /// Change `id`'s command lines and extra flags as this host's configuration renders them
    /// (what a render job answers for a review page on another console).
    pub async fn launch_of(&self, id: i64) -> Result<app::api::LaunchView, ChangeError> {
        let row = self.store.get(id).await.map_err(store_error)?;
        Ok(self.render(&row.profile, &row.base_env, &row.env).await)
    }

    /// A change's command lines (active and candidate) and the candidate's extra flags as
    /// this host's configuration renders them.
    pub async fn render(&self, profile: &str, base_env: &str, env: &str) -> app::api::LaunchView {
        app::api::LaunchView {
            argv_before: self.launch_argv(profile, base_env),
            argv_after: self.launch_argv(profile, env),
            extra_flags: match parse_profile(profile, env) {
                Ok(p) => self.ctx.control.policy_reading(&p).await.flags,
                Err(_) => Vec::new(),
            },
        }
    }

    pub async fn propose(
        &self,
        caller: Caller,
        id: Option<i64>,
        profile: String,
        env_text: String,
        reason: String,
        submit: bool,
    ) -> Result<i64, ChangeError> {
        let reason = reason.trim().to_string();
        if submit && reason.is_empty() {
            return Err(ChangeError::Invalid(
                "reason: a change goes to review with a reason (it goes into the journal)".into(),
            ));
        }
        let p = parse_profile(&profile, &env_text)?;
        if self.ctx.data.engine(&p.engine).is_none() {
            return Err(ChangeError::NoSuchEngine {
                profile,
                engine: p.engine,
            });
        }
        let policy = self.ctx.control.policy_issues(&p).await;
        if !policy.is_empty() {
            return Err(ChangeError::Invalid(
                policy.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("; "),
            ));
        }
        let env = p.to_env();
        let base = self.active_env(&profile).await?;
        if env == base {
            return Err(ChangeError::Invalid(
                "the candidate is the same as the active profile: nothing to review".into(),
            ));
        }
        let state = if submit {
            ChangeState::Submitted
        } else {
            ChangeState::Draft
        };
        let id = match id {
            None => {
                if !caller.role.allows(app::domain::auth::Role::Operator) {
                    return Err(ChangeError::Forbidden(
                        "proposing a change needs the operator role".into(),
                    ));
                }
                self.store
                    .insert(&profile, &caller.name, state, &reason, &base, &env)
                    .await
                    .map_err(store_error)?
            }
            Some(id) => {
                let row = self.store.get(id).await.map_err(store_error)?;
                if row.profile != profile {
                    return Err(ChangeError::Invalid(format!(
                        "change #{id} is about {}, not {profile}",
                        row.profile
                    )));
                }
                let facts = self.facts(&row, &caller).await?;
                review::check(ChangeAction::Edit, &facts).map_err(refused)?;
                // Reworked against today's active profile: no longer stale. Only while the
                // change is still where the edit was allowed (not approved meanwhile); the
                // new content has a new hash, so an approval of the old one cannot land.
                let edited = self
                    .store
                    .update_content(id, row.state, state, &reason, &base, &env)
                    .await
                    .map_err(store_error)?;
                if !edited {
                    return Err(moved_on(id));
                }
                if row.env != env {
                    let note = format!(
                        "content {} → {}",
                        short(&content_hash(&row.env)),
                        short(&content_hash(&env))
                    );
                    self.event(id, &caller.name, "edited", &note).await;
                }
                id
            }
        };
        let kind = if submit { "submitted" } else { "drafted" };
        self.event(id, &caller.name, kind, &reason).await;
        if submit {
            let row = self.store.get(id).await.map_err(store_error)?;
            self.journal(&caller.name, "change-submitted", &row, &reason, serde_json::json!({}))
                .await;
        }
        Ok(id)
    }

    pub async fn review(
        &self,
        caller: Caller,
        id: i64,
        approve: bool,
        comment: String,
        hash: String,
    ) -> Result<(), ChangeError> {
        let row = self.store.get(id).await.map_err(store_error)?;
        let action = if approve {
            ChangeAction::Approve
        } else {
            ChangeAction::RequestChanges
        };
        let comment = comment.trim().to_string();
        if !approve && comment.is_empty() {
            return Err(ChangeError::Invalid(
                "comment: say what should change before sending it back".into(),
            ));
        }
        let current = content_hash(&row.env);
        if hash.trim() != current {
            return Err(ChangeError::Invalid(format!(
                "change #{id} changed since you opened it (you reviewed {}, it is now {}); reload and review it again",
                if hash.trim().is_empty() {
                    "no content"
                } else {
                    short(hash.trim())
                },
                short(&current)
            )));
        }
        let facts = self.facts(&row, &caller).await?;
        let to = review::check(action, &facts).map_err(refused)?;
        // Compare-and-set on the state and the content the reviewer saw.
        if !self
            .store
            .transition_reviewed(row.id, row.state, to, &row.env)
            .await
            .map_err(store_error)?
        {
            return Err(moved_on(id));
        }
        let kind = if approve { "approved" } else { "changes-requested" };
        self.event(id, &caller.name, kind, &comment).await;
        self.journal(
            &caller.name,
            if approve {
                "change-approved"
            } else {
                "change-changes-requested"
            },
            &row,
            if comment.is_empty() { &row.reason } else { &comment },
            serde_json::json!({}),
        )
        .await;
        Ok(())
    }

    pub async fn withdraw(&self, caller: Caller, id: i64, comment: String) -> Result<(), ChangeError> {
        let row = self.store.get(id).await.map_err(store_error)?;
        let facts = self.facts(&row, &caller).await?;
        let to = review::check(ChangeAction::Withdraw, &facts).map_err(refused)?;
        self.transition(&row, to).await?;
        self.event(id, &caller.name, "withdrawn", comment.trim()).await;
        self.journal(
            &caller.name,
            "change-withdrawn",
            &row,
            comment.trim(),
            serde_json::json!({}),
        )
        .await;
        Ok(())
    }

    pub async fn comment(&self, caller: Caller, id: i64, text: String) -> Result<(), ChangeError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ChangeError::Invalid("comment: empty".into()));
        }
        if text.chars().count() > review::MAX_COMMENT {
            return Err(ChangeError::Invalid(format!(
                "comment: at most {} characters",
                review::MAX_COMMENT
            )));
        }
        if !caller.role.allows(app::domain::auth::Role::Operator) {
            return Err(ChangeError::Forbidden("commenting needs the operator role".into()));
        }
        self.store.get(id).await.map_err(store_error)?;
        self.store
            .add_event(id, &caller.name, "commented", text)
            .await
            .map_err(store_error)
    }

    /// Whether `caller` may start change `id`'s gate now (the review rules, and no other gate
    /// on its profile): the change and the state it moves to.
    async fn gate_allowed(&self, caller: &Caller, id: i64) -> Result<(ChangeRow, ChangeState), ChangeError> {
        let row = self.store.get(id).await.map_err(store_error)?;
        let facts = self.facts(&row, caller).await?;
        let to = review::check(ChangeAction::StartGate, &facts).map_err(refused)?;
        if let Some(other) = self.store.gating(&row.profile).await.map_err(store_error)? {
            return Err(ChangeError::Invalid(format!(
                "change #{other} is in its gate on {} now; wait for it",
                row.profile
            )));
        }
        Ok((row, to))
    }

    /// The profile of change `id` when `caller` may start its gate now (checked where the
    /// request is made; the host that runs the gate checks again).
    pub async fn gate_profile(&self, caller: &Caller, id: i64) -> Result<String, ChangeError> {
        Ok(self.gate_allowed(caller, id).await?.0.profile)
    }

    /// Starts the change's gate on this host; the handle ends when the gate has (a job from
    /// another host waits on it to report the outcome).
    pub async fn start_gate(&self, caller: Caller, id: i64) -> Result<tokio::task::JoinHandle<()>, ChangeError> {
        let (row, to) = self.gate_allowed(&caller, id).await?;
        // One gate per profile, across consoles and the CLI: the hold is taken before the
        // state moves, and kept until the gate has finished.
        let hold = self
            .ctx
            .control
            .hold_for_gate(&row.profile)
            .map_err(|e| ChangeError::Invalid(e.to_string()))?;
        self.transition(&row, to).await?;
        self.event(id, &caller.name, "gate-started", "").await;
        self.save_gate(id, &app::domain::review::GateReport::default()).await;
        let this = self.clone();
        let who = caller.name.clone();
        Ok(tokio::spawn(async move { this.run_gate(row, who, hold).await }))
    }

    pub async fn rollback(&self, caller: Caller, id: i64, reason: String) -> Result<(), ChangeError> {
        let reason = reason.trim().to_string();
        if reason.is_empty() {
            return Err(ChangeError::Invalid(
                "reason: a rollback goes into the journal with its reason".into(),
            ));
        }
        let row = self.store.get(id).await.map_err(store_error)?;
        let facts = self.facts(&row, &caller).await?;
        let to = review::check(ChangeAction::Rollback, &facts).map_err(refused)?;
        let previous = parse_profile(&row.profile, &row.base_env)?;
        self.transition(&row, to).await?;
        self.ctx
            .store
            .upsert(&previous)
            .await
            .map_err(|e| ChangeError::Internal(e.into()))?;
        self.event(id, &caller.name, "rolled-back", &reason).await;
        let running = self.ctx.control.is_running(&row.profile);
        self.journal(
            &caller.name,
            "change-rolled-back",
            &row,
            &reason,
            serde_json::json!({"restart": running, "diff": env_diff(&row.env, &row.base_env)}),
        )
        .await;
        if running {
            // The engine runs the rolled-back profile: restart it on the previous one.
            let ctx = self.ctx.clone();
            let name = row.profile.clone();
            let who = caller.name.clone();
            tokio::spawn(async move {
                let result = ctx.control.restart(&name).await.map(|o| format!("{o:?}"));
                let reason = format!("rollback of change #{id}");
                ctx.record_action(&who, "restart", &name, &reason, &result).await;
            });
        }
        Ok(())
    }
}
