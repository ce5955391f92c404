//! Live state through the shared database: each console writes its own engines' rows
//! (`engine_live`, one per engine it runs) when they change, and reads the other hosts' rows
//! every second for its fleet page. A row of a host whose heartbeat is old is shown
//! unreachable, with when it was last heard, instead of its last figures as if current.

use crate::db::Pool;
use app::domain::engine::{EngineState, EngineStatus};
use std::collections::HashMap;

/// The largest row read from another host (an engine's status is a few KiB).
const MAX_ROW: usize = 256 << 10;

/// Writes the rows that changed since `published` and deletes those gone; `published` is
/// updated to what the table now holds for this host. Only engines that run (or are not
/// plainly stopped) are published: profiles are shared by the fleet, engines are not.
pub async fn publish(
    pool: &Pool,
    host: &str,
    rows: &[EngineStatus],
    published: &mut HashMap<String, String>,
    now_ms: i64,
) -> Result<usize, sqlx::Error> {
    let mut next: HashMap<String, String> = HashMap::new();
    for r in rows
        .iter()
        .filter(|r| r.node.is_empty() && r.state != EngineState::Stopped)
    {
        // The figures' own timestamp moves every scrape; a row is "changed" when anything
        // else does, or the figures do.
        next.insert(r.profile.clone(), serde_json::to_string(r).unwrap_or_default());
    }
    let mut tx = pool.begin().await?;
    let mut written = 0;
    for (profile, status) in &next {
        if published.get(profile) == Some(status) {
            continue;
        }
        sqlx::query(
            "insert into engine_live (host, profile, status, at_ms) values ($1, $2, $3, $4)
             on conflict (host, profile) do update set status = excluded.status, at_ms = excluded.at_ms",
        )
        .bind(host)
        .bind(profile)
        .bind(status)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        written += 1;
    }
    for gone in published.keys().filter(|p| !next.contains_key(*p)) {
        sqlx::query("delete from engine_live where host = $1 and profile = $2")
            .bind(host)
            .bind(gone)
            .execute(&mut *tx)
            .await?;
        written += 1;
    }
    tx.commit().await?;
    *published = next;
    Ok(written)
}

/// Forgets what was published: the next `publish` writes every row again (after the
/// database was unreachable, or at start, when the table may hold an older run's rows).
pub async fn clear(pool: &Pool, host: &str) -> Result<(), sqlx::Error> {
    sqlx::query("delete from engine_live where host = $1")
        .bind(host)
        .execute(pool)
        .await?;
    Ok(())
}

/// The other hosts' engines, each marked with its host and a link to its page there; those
/// of a host whose heartbeat is older than `stale_ms` are unreachable.
/// The other hosts that run `profile`'s engine (a row published, whatever its state), by
/// name: where an action on it from this console goes.
pub async fn running_elsewhere(pool: &Pool, profile: &str, me: &str) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar("select host from engine_live where profile = $1 and host <> $2 order by host")
        .bind(profile)
        .bind(me)
        .fetch_all(pool)
        .await
}

pub async fn others(pool: &Pool, me: &str, now_ms: i64, stale_ms: i64) -> Result<Vec<EngineStatus>, sqlx::Error> {
    let rows: Vec<(String, String, String, String, i64)> = sqlx::query_as(
        "select l.host, l.profile, l.status, h.url, h.heartbeat_ms from engine_live l join host h on h.name = l.host
         where l.host <> $1 order by l.host, l.profile limit 100000",
    )
    .bind(me)
    .fetch_all(pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for (host, profile, status, url, heard) in rows {
        let mut r = match (status.len() <= MAX_ROW)
            .then(|| serde_json::from_str::<EngineStatus>(&status).ok())
            .flatten()
        {
            Some(r) => r,
            None => {
                tracing::warn!(host = %host, profile = %profile, bytes = status.len(), "an unreadable engine row from another host");
                let mut r = EngineStatus::blank(
                    &profile,
                    app::domain::engine::EngineKind::Vllm,
                    EngineState::Unreachable,
                );
                r.note = Some(format!("{host} published a row this console cannot read"));
                r
            }
        };
        // The row's identity is the table's, not what the JSON claims.
        r.profile = profile;
        r.node = host.clone();
        r.shared_host = true;
        r.link = super::registry::safe_url(&url).map(|u| format!("{}/engines/{}", u.trim_end_matches('/'), r.profile));
        let age_ms = now_ms.saturating_sub(heard);
        if age_ms > stale_ms {
            r.state = EngineState::Unreachable;
            r.live = None;
            r.verdict = None;
            r.note = Some(format!("{host}: no heartbeat for {} s", age_ms / 1000));
        }
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::registry;
    use app::domain::engine::EngineKind;

    #[tokio::test]
    async fn a_hosts_running_engines_reach_the_others_and_a_silent_host_is_unreachable() {
        for db in crate::db::testing::both().await {
            let other = db.another_console().await;
            for (name, url) in [("gpu-a", "http://a:8080"), ("gpu-b", "https://b:8443/")] {
                let me = crate::hosts::Identity {
                    name: name.into(),
                    url: url.into(),
                    console_id: format!("id-{name}"),
                    run: "r".into(),
                };
                registry::register(&db.pool, &me, &Default::default(), 1_000, 15_000)
                    .await
                    .unwrap();
            }
            let mut healthy = EngineStatus::blank("llama", EngineKind::Vllm, EngineState::Healthy);
            healthy.port = 8000;
            let stopped = EngineStatus::blank("qwen", EngineKind::Sglang, EngineState::Stopped);
            let mut published = HashMap::new();
            let n = publish(&other, "gpu-b", &[healthy.clone(), stopped], &mut published, 1_000)
                .await
                .unwrap();
            assert_eq!(n, 1, "only the running engine");
            assert_eq!(
                publish(&other, "gpu-b", &[healthy.clone()], &mut published, 2_000)
                    .await
                    .unwrap(),
                0,
                "unchanged"
            );
            let seen = others(&db.pool, "gpu-a", 2_000, 15_000).await.unwrap();
            assert_eq!(seen.len(), 1, "{:?}", db.backend);
            assert_eq!(
                (seen[0].node.as_str(), seen[0].state, seen[0].port),
                ("gpu-b", EngineState::Healthy, 8000)
            );
            assert_eq!(seen[0].link.as_deref(), Some("https://b:8443/engines/llama"));
            assert!(
                others(&db.pool, "gpu-b", 2_000, 15_000).await.unwrap().is_empty(),
                "a host's own rows are local"
            );
            // gpu-b goes silent.
            let late = others(&db.pool, "gpu-a", 40_000, 15_000).await.unwrap();
            assert_eq!(late[0].state, EngineState::Unreachable);
            assert!(late[0].note.as_deref().unwrap().contains("no heartbeat for 39 s"));
            // Its engine stops: the row goes.
            assert_eq!(publish(&other, "gpu-b", &[], &mut published, 3_000).await.unwrap(), 1);
            assert!(others(&db.pool, "gpu-a", 3_000, 15_000).await.unwrap().is_empty());
            // A row that is not a status is shown as such, not dropped, and nothing panics.
            sqlx::query(
                "insert into engine_live (host, profile, status, at_ms) values ('gpu-b', 'odd', '{\"state\": 7}', 1)",
            )
            .execute(&db.pool)
            .await
            .unwrap();
            let odd = others(&db.pool, "gpu-a", 3_000, 15_000).await.unwrap();
            assert_eq!(
                (odd[0].profile.as_str(), odd[0].state),
                ("odd", EngineState::Unreachable)
            );
            // A registered address that is not an http(s) URL is no link.
            sqlx::query("update host set url = 'javascript:alert(1)' where name = 'gpu-b'")
                .execute(&db.pool)
                .await
                .unwrap();
            assert_eq!(others(&db.pool, "gpu-a", 3_000, 15_000).await.unwrap()[0].link, None);
            let rows = registry::list(&db.pool).await.unwrap();
            let b = rows
                .into_iter()
                .find(|h| h.name == "gpu-b")
                .unwrap()
                .row(3_000, 15_000, "gpu-a");
            assert_eq!(b.url, "");
        }
    }

    #[tokio::test]
    async fn a_host_name_belongs_to_one_console_while_it_beats() {
        for db in crate::db::testing::both().await {
            let one = crate::hosts::Identity {
                name: "gpu-a".into(),
                url: "http://a".into(),
                console_id: "one".into(),
                run: "r1".into(),
            };
            let two = crate::hosts::Identity {
                console_id: "two".into(),
                ..one.clone()
            };
            registry::register(&db.pool, &one, &Default::default(), 1_000, 15_000)
                .await
                .unwrap();
            let refused = registry::register(&db.pool, &two, &Default::default(), 5_000, 15_000)
                .await
                .unwrap_err();
            assert!(
                refused
                    .to_string()
                    .contains("host name gpu-a is held by another console"),
                "{refused}"
            );
            assert!(registry::heartbeat(&db.pool, &one, 6_000).await.unwrap());
            // The first console is gone for longer than the stale window: the name is free.
            registry::register(&db.pool, &two, &Default::default(), 30_000, 15_000)
                .await
                .unwrap();
            assert!(
                !registry::heartbeat(&db.pool, &one, 31_000).await.unwrap(),
                "the old console's heartbeat no longer lands"
            );
            // Restarted with the same data directory (same console id): takes its row back.
            registry::register(&db.pool, &two, &Default::default(), 32_000, 15_000)
                .await
                .unwrap();
        }
    }
}
