//! Every fault scenario of the simulator, observed from outside: over HTTP and `/metrics`,
//! the way the console's collectors and an operator see them.

use crate::common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn hang_keeps_health_200_while_completions_never_answer() {
    let (env, port) = Env::serving_vllm("h", "");
    set_fault(port, "hang").await;
    let c = client();
    assert_eq!(
        c.get(format!("http://127.0.0.1:{port}/health"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let r = c
        .post(format!("http://127.0.0.1:{port}/v1/completions"))
        .timeout(Duration::from_secs(2))
        .json(&serde_json::json!({"model": "m", "prompt": "hi", "max_tokens": 1}))
        .send()
        .await;
    assert!(r.is_err_and(|e| e.is_timeout()));
    assert!(metric(port, "vllm:num_requests_waiting").await + metric(port, "vllm:num_requests_running").await >= 1.0);
    assert_eq!(env.status("h")["state"], "healthy", "health alone cannot see a hang");
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_makes_the_engine_dead() {
    let env = Env::new();
    let port = free_port();
    env.sglang_profile("c", port, "");
    let pid = env.serve_ok("c")["pid"].as_i64().unwrap();
    set_fault(port, "crash").await;
    let dead = eventually(Duration::from_secs(10), async || (!pid_alive(pid)).then_some(())).await;
    assert!(dead.is_some());
    let st = env.status("c");
    assert_eq!(st["state"], "dead");
    let logs = str(&env.run(&["logs", "--profile", "c"])).0;
    assert!(logs.contains("Received sigquit from a child process"), "{logs}");
}

#[tokio::test(flavor = "multi_thread")]
async fn oom_under_load_kills_the_engine_on_a_long_prompt() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("o", port, "ENV_ROOFLINE_SIM_FAULT=oom-under-load\n");
    let pid = env.serve_ok("o")["pid"].as_i64().unwrap();
    let short = load(port, 2, 40, 4);
    for h in short {
        h.await.unwrap();
    }
    assert!(pid_alive(pid), "short prompts are fine");
    let _long = load(port, 1, 8000, 4);
    assert!(
        eventually(Duration::from_secs(10), async || (!pid_alive(pid)).then_some(()))
            .await
            .is_some()
    );
    let logs = str(&env.run(&["logs", "--profile", "o"])).0;
    assert!(
        logs.contains("CUDA out of memory") && logs.contains("EngineDeadError"),
        "{logs}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn load_fills_the_queue_and_kv_exhaustion_preempts() {
    let env = Env::new();
    let port = free_port();
    // A 24 GiB card leaves ~45k KV tokens for this model; the fault cuts that to a tenth.
    env.vllm_profile("k", port, "ENV_ROOFLINE_SIM_GPU_GIB=24\n");
    env.serve_ok("k");
    set_fault(port, "kv-exhaustion").await;
    let handles = load(port, 40, 2000, 300);
    let seen = eventually(Duration::from_secs(20), async || {
        let waiting = metric(port, "vllm:num_requests_waiting").await;
        let kv = metric(port, "vllm:kv_cache_usage_perc").await;
        (waiting > 0.0 && kv > 0.9).then_some((waiting, kv))
    })
    .await;
    assert!(seen.is_some(), "queue and KV usage rise under load");
    let preempted = metric_exceeds(port, "vllm:num_preemptions_total", 0.0, Duration::from_secs(20)).await;
    assert!(preempted, "KV exhaustion causes preemptions");
    for h in handles {
        h.abort();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ttft_grows_with_load_as_requests_queue_at_the_running_limit() {
    let (_env, port) = Env::serving_vllm("q", "");
    let ttft = async || {
        (
            metric(port, "vllm:time_to_first_token_seconds_sum").await,
            metric(port, "vllm:time_to_first_token_seconds_count").await,
        )
    };
    load_and_wait(port, 2, 100, 8).await;
    let (idle_sum, idle_count) = ttft().await;
    // 40 requests against MAX_RUNNING_REQUESTS=8: most of them wait for a slot.
    load_and_wait(port, 40, 100, 30).await;
    let (sum, count) = ttft().await;
    let idle = idle_sum / idle_count;
    let loaded = (sum - idle_sum) / (count - idle_count);
    assert_eq!(count - idle_count, 40.0);
    assert!(
        loaded > idle * 3.0,
        "TTFT grows with load: idle {idle:.4} s, loaded {loaded:.4} s"
    );
    assert!(metric(port, "vllm:request_queue_time_seconds_sum").await > 0.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn preemption_storm_prefix_misses_and_tpot_slowdown_show_in_metrics() {
    let (_env, port) = Env::serving_vllm("m", "");
    let itl_mean = async || {
        metric(port, "vllm:inter_token_latency_seconds_sum").await
            / metric(port, "vllm:inter_token_latency_seconds_count").await
    };

    // The same prompt twice hits the prefix cache…
    for _ in 0..2 {
        load_and_wait(port, 1, 400, 4).await;
    }
    let hits = metric(port, "vllm:prefix_cache_hits_total").await;
    assert!(hits > 0.0);
    // …until the prefix-cache-miss fault.
    set_fault(port, "prefix-cache-miss").await;
    load_and_wait(port, 2, 400, 4).await;
    assert_eq!(metric(port, "vllm:prefix_cache_hits_total").await, hits);

    let base = {
        load_and_wait(port, 2, 40, 40).await;
        itl_mean().await
    };
    set_fault(port, "tpot-slowdown").await;
    load_and_wait(port, 2, 40, 40).await;
    let slow_itl = metric(port, "vllm:inter_token_latency_seconds_sum").await;
    assert!(
        itl_mean().await > base * 1.3,
        "ITL rises: base {base}, now {} (sum {slow_itl})",
        itl_mean().await
    );

    set_fault(port, "preemption-storm").await;
    let before = metric(port, "vllm:num_preemptions_total").await;
    let handles = load(port, 4, 40, 50);
    assert!(
        metric_exceeds(
            port,
            "vllm:num_preemptions_total",
            before + 3.0,
            Duration::from_secs(15)
        )
        .await
    );
    for h in handles {
        h.abort();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_work_and_the_broken_parser_returns_them_as_text() {
    let (_env, port) = Env::serving_vllm("t", "");
    let body = serde_json::json!({
        "model": "m",
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    });
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let v = json(client().post(&url).json(&body)).await;
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    let call = &v["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "get_weather");
    let args: serde_json::Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["city"], "Paris");
    assert!(v["usage"]["completion_tokens"].as_u64().unwrap() > 0);

    // Streaming: the arguments assembled from deltas equal the non-streamed ones.
    let mut stream_body = body.clone();
    stream_body["stream"] = serde_json::json!(true);
    stream_body["stream_options"] = serde_json::json!({"include_usage": true});
    let text = client()
        .post(&url)
        .json(&stream_body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut assembled = String::new();
    let mut saw_usage = false;
    for line in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
        if line == "[DONE]" {
            continue;
        }
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        saw_usage |= c["usage"].is_object();
        if let Some(a) = c
            .pointer("/choices/0/delta/tool_calls/0/function/arguments")
            .and_then(|a| a.as_str())
        {
            assembled.push_str(a);
        }
    }
    assert!(text.trim_end().ends_with("data: [DONE]"));
    assert!(saw_usage);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&assembled).unwrap(), args);

    set_fault(port, "broken-tool-parser").await;
    let v = json(client().post(&url).json(&body)).await;
    assert_eq!(v["choices"][0]["message"]["tool_calls"], serde_json::json!([]));
    assert!(v["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .contains("<tool_call>"));
}

#[tokio::test(flavor = "multi_thread")]
async fn sglang_without_enable_metrics_has_no_metrics_route_and_hang_fails_health() {
    let env = Env::new();
    let port = free_port();
    // The console always adds --enable-metrics; an operator's profile can only add more.
    env.sglang_profile("g", port, "ENV_SGLANG_HEALTH_CHECK_TIMEOUT=1\n");
    env.serve_ok("g");
    assert!(metric(port, "sglang:num_running_reqs").await == 0.0);
    let r = client()
        .get(format!("http://127.0.0.1:{port}/version"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404, "SGLang has no /version");
    set_fault(port, "hang").await;
    let r = client()
        .get(format!("http://127.0.0.1:{port}/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503, "SGLang's health generates a token, so a hang fails it");
    let direct = std::process::Command::new(BIN)
        .args([
            "sim",
            "sglang",
            "--model-path",
            env.model().to_str().unwrap(),
            "--port",
            &free_port().to_string(),
            "--help",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&direct.stdout).contains("--enable-metrics"));
}
