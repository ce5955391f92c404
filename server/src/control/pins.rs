//! Pinned versions: every healthy start records the set it ran on (engine version, torch, the
//! CUDA torch was built with, the NVIDIA driver, the image digest of a container
//! installation) in SQLite and the journal; a change's gate adds its bench. The newest set is
//! what the profile page shows and what the driver-mismatch row compares the host against.

use super::flags::FlagsError;
use super::EngineControl;
use app::domain::engine::EngineKind;
use app::domain::pins::{parse_env_report, BenchPin, EnvFacts, KnownGood, PinComparison};

/// The argv of an installation's environment report.
fn report_argv(kind: EngineKind, simulator: bool, mut command: Vec<String>) -> Vec<String> {
    match (kind, simulator) {
        (EngineKind::Vllm, _) => {
            command.push("collect-env".into());
            command
        }
        (EngineKind::Sglang, true) => {
            command.push("check-env".into());
            command
        }
        // `python -m sglang.launch_server` → `python -m sglang.check_env`.
        (EngineKind::Sglang, false) => vec![
            command.first().cloned().unwrap_or_else(|| "python".into()),
            "-m".into(),
            "sglang.check_env".into(),
        ],
    }
}

impl EngineControl {
    /// What the installation's own environment report says now (run fresh: a driver can
    /// change under the same engine version).
    pub async fn env_facts(&self, install_name: &str) -> Result<EnvFacts, FlagsError> {
        let install = self
            .data
            .engine(install_name)
            .ok_or_else(|| FlagsError::NoSuchInstall(install_name.to_string()))?;
        let command = self.data.command_for(install).map_err(|e| FlagsError::Help {
            command: "roofline".into(),
            detail: e.to_string(),
        })?;
        let argv = report_argv(install.kind, install.simulator, command);
        let text = super::flags::run_in(install, &argv, super::command::Target::Host, &self.data.console_id())
            .await
            .map_err(|detail| FlagsError::Help {
                command: argv.join(" "),
                detail: detail.to_string(),
            })?;
        let mut facts = parse_env_report(&text);
        if facts.driver.is_none() {
            // The report could not see the driver; NVML can.
            if let app::domain::gpu::GpuState::Available { driver, .. } = crate::gpu::read().await {
                facts.driver = driver;
            }
        }
        Ok(facts)
    }

    /// Records the set a healthy start of `profile` ran on, in SQLite and the journal: the
    /// stored profile's installation, or the candidate's when a change's gate started it (the
    /// gate records its set itself, with its bench, once the bench passed).
    pub async fn record_known_good(
        &self,
        profile: &str,
        candidate: Option<&app::domain::profile::Profile>,
        bench: Option<BenchPin>,
    ) -> anyhow::Result<KnownGood> {
        let set = self.known_good_now(profile, candidate, bench).await?;
        self.insert_known_good(&set, None).await?;
        Ok(set)
    }

    /// A healthy start's set, recorded once per engine process (an engine that flaps between
    /// hung and healthy is one start; the monitor and `roofline serve` see the same start) and
    /// never under a gate (which records its candidate's set itself, with its bench). `None`
    /// when there was nothing to record.
    pub async fn record_start_once(&self, profile: &str) -> anyhow::Result<Option<KnownGood>> {
        if self.gate_held(profile) || crate::db::away() {
            return Ok(None);
        }
        let Some(super::Running::Alive(record)) = self.running(profile) else {
            return Ok(None);
        };
        let started_ms = i64::try_from(record.started_at)
            .unwrap_or(i64::MAX)
            .saturating_mul(1000);
        // Cheap first: the environment report takes seconds on a real host.
        if self.known_good(profile).await?.is_some_and(|k| k.at_ms >= started_ms) {
            return Ok(None);
        }
        let set = self.known_good_now(profile, None, None).await?;
        Ok(self.insert_known_good(&set, Some(started_ms)).await?.then_some(set))
    }

    async fn known_good_now(
        &self,
        profile: &str,
        candidate: Option<&app::domain::profile::Profile>,
        bench: Option<BenchPin>,
    ) -> anyhow::Result<KnownGood> {
        let install = match candidate {
            Some(p) => p.engine.clone(),
            None => self.stored_profile(profile).await?.engine,
        };
        let facts = self.env_facts(&install).await?;
        Ok(KnownGood {
            profile: profile.to_string(),
            image_digest: self.running_image_digest(profile),
            install,
            at_ms: crate::clock::now_ms(),
            facts,
            bench,
        })
    }

    /// Inserts the set and journals it; with `unless_since`, only when no set of the profile
    /// was recorded at or after that time (checked in the same statement). Whether it was.
    async fn insert_known_good(&self, set: &KnownGood, unless_since: Option<i64>) -> anyhow::Result<bool> {
        let bench_json = match &set.bench {
            Some(b) => Some(serde_json::to_string(b)?),
            None => None,
        };
        let inserted = sqlx::query(
            "insert into known_good (profile, install, at_ms, facts, image_digest, bench) \
             select $1, $2, $3, $4, $5, $6 \
             where $7 is null or not exists (select 1 from known_good where profile = $1 and at_ms >= $7)",
        )
        .bind(&set.profile)
        .bind(&set.install)
        .bind(set.at_ms)
        .bind(serde_json::to_string(&set.facts)?)
        .bind(&set.image_digest)
        .bind(bench_json)
        .bind(unless_since)
        .execute(&self.store.pool())
        .await?
        .rows_affected()
            > 0;
        if inserted {
            self.journal()
                .record(
                    "roofline",
                    "known-good",
                    &set.profile,
                    if set.bench.is_some() { "a change's gate passed" } else { "a healthy start" },
                    serde_json::json!({"install": set.install, "engine_version": set.facts.engine_version, "torch": set.facts.torch, "cuda": set.facts.cuda, "driver": set.facts.driver, "image": set.image_digest, "bench": set.bench}),
                )
                .await;
        }
        Ok(inserted)
    }

    /// The digest of the image the profile's running container was started from (as the
    /// runtime resolved it), `None` for a process engine.
    pub fn running_image_digest(&self, profile: &str) -> Option<String> {
        let Some(super::Running::Alive(record)) = self.running(profile) else {
            return None;
        };
        let c = record.container?;
        c.image_digest
            .or_else(|| super::container::pinned_digest(&c.image).map(str::to_string))
    }

    /// The newest set `profile` started well on.
    pub async fn known_good(&self, profile: &str) -> anyhow::Result<Option<KnownGood>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            profile: String,
            install: String,
            at_ms: i64,
            facts: String,
            image_digest: Option<String>,
            bench: Option<String>,
        }
        let row: Option<Row> = sqlx::query_as(
            "select profile, install, at_ms, facts, image_digest, bench from known_good where profile = $1 order by id desc limit 1",
        )
        .bind(profile)
        .fetch_optional(&self.store.pool())
        .await?;
        Ok(row.map(|r| KnownGood {
            profile: r.profile,
            install: r.install,
            at_ms: r.at_ms,
            facts: serde_json::from_str(&r.facts).unwrap_or_default(),
            image_digest: r.image_digest,
            bench: r.bench.and_then(|b| serde_json::from_str(&b).ok()),
        }))
    }

    /// The pinned set against the host now, for the driver-mismatch row.
    pub async fn pin_comparison(&self, profile: &str) -> Option<PinComparison> {
        let pinned = self.known_good(profile).await.ok()??;
        let current = match self.env_facts(&pinned.install).await {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(profile, error = %e, "no environment report to compare with the pinned set");
                return None;
            }
        };
        // The image the installation names now (what the next start would run).
        let current_image = self
            .data
            .engine(&pinned.install)
            .and_then(|i| i.image.as_deref())
            .and_then(super::container::pinned_digest)
            .map(str::to_string);
        Some(PinComparison {
            pinned,
            current,
            current_image,
        })
    }
}
