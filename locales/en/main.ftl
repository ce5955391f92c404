# Roofline Console, English.

app-title = Roofline Console
nav-label = Main
nav-fleet = Fleet
nav-profiles = Profiles
lang-switch-label = Language
loading = Loading…
not-found-title = Nothing here
not-found-back = Back to the fleet

## Fleet
fleet-title = Fleet
fleet-demo-note = This is the demo: simulated engines the console started itself, with light demo traffic it sends them (console --demo). To run a real vLLM or SGLang, name its installation in the host configuration (roofline.toml: [engines.NAME] with kind and command), then create a profile for it; this note goes once a real engine is configured.
fleet-demo-install = Install guide
fleet-demo-config = Annotated host configuration
fleet-engine-count = { $count ->
    [one] { $count } engine
   *[other] { $count } engines
    }
fleet-healthy-count = { $count ->
    [one] { $count } healthy
   *[other] { $count } healthy
    }
fleet-empty = No engines yet: import a launch profile with `roofline profile import FILE.env`.
col-state = State
col-profile = Profile
col-engine = Engine
col-address = Address
col-uptime = Uptime
col-pid = PID
col-model = Model
col-port = Port
col-updated = Updated

## Engine states
state-stopped = stopped
state-starting = starting
state-healthy = healthy
state-unhealthy = unhealthy
state-dead = dead
badge-simulated = simulated
badge-simulated-title = This engine is the Roofline simulator, not a real GPU engine.
badge-demo-traffic = demo traffic
badge-demo-traffic-title = The console itself sends this engine light synthetic requests (console --demo): its queue, KV cache and latency are not from clients.

## Startup phases
phase-launched = Process started
phase-loading-weights = Loading weights
phase-profiling = Profiling memory
phase-allocating-kv-cache = Allocating KV cache
phase-capturing-graphs = Capturing CUDA graphs
phase-starting-server = Starting HTTP server
phase-ready = Ready
startup-progress = Startup progress

## Engine page
actions-label = Engine actions
action-serve = Serve
action-stop = Stop
action-restart = Restart
action-pending = Working…
confirm-serve = Start engine { $profile }?
confirm-stop = Stop engine { $profile }? In-flight requests will fail.
confirm-restart = Restart engine { $profile }? The runbook restarts only a dead, hung or OOM-under-load engine; capture metrics and logs first.
confirm-yes = Confirm
confirm-no = Cancel
engine-command = Command line
engine-log = Log
engine-sections = Sections of the engine page
engine-section-overview = Overview
engine-section-charts = Charts
engine-section-log = Log
engine-section-runs = Runs
engine-section-gpu = GPU
engine-section-profile = Profile
engine-open-profile = Open the profile: its keys, history and changes
failure-title = The last start failed
failure-symptom = Symptom
failure-cause = Cause
failure-action = Action

## Startup failures (runbook roofline-runtime, "Common startup failures")
startup-failure-cuda-oom-load-symptom = `CUDA out of memory` while loading weights
startup-failure-cuda-oom-load-cause = The weights do not fit at the current tensor parallelism.
startup-failure-cuda-oom-load-action = Run `roofline vram`, raise TP or take the FP8/AWQ build.
startup-failure-kv-too-small-symptom = The model's max seq len is larger than what the KV cache can hold
startup-failure-kv-too-small-cause = No KV cache is left after the weights, not even for one request.
startup-failure-kv-too-small-action = Lower the context length, raise the memory fraction, or use fp8 KV cache.
startup-failure-gpu-memory-taken-symptom = Free GPU memory at startup is less than the requested utilization
startup-failure-gpu-memory-taken-cause = Another process holds memory on the GPU.
startup-failure-gpu-memory-taken-action = Run `roofline gpu` to find foreign processes; lower the memory fraction only if the neighbour must stay.
startup-failure-address-in-use-symptom = `Address already in use`
startup-failure-address-in-use-cause = An old process or another profile is on the port.
startup-failure-address-in-use-action = `roofline stop` the other profile; `roofline gpu` for foreign processes.
startup-failure-incomplete-weights-symptom = `config.json` or the tokenizer is missing
startup-failure-incomplete-weights-cause = The weight transfer is incomplete.
startup-failure-incomplete-weights-action = Verify sha256 and the contents of the model directory.
startup-failure-unsupported-architecture-symptom = `Model architectures [...] are not supported`
startup-failure-unsupported-architecture-cause = The engine is older than the model.
startup-failure-unsupported-architecture-action = Make a profile with the newer engine version; keep the old one.
startup-failure-driver-mismatch-symptom = `no kernel image` or `CUDA driver version is insufficient`
startup-failure-driver-mismatch-cause = Driver, CUDA and torch wheel do not match.
startup-failure-driver-mismatch-action = Restore the pinned versions from the journal.
startup-failure-invalid-argument-symptom = `error: argument …`, `unrecognized arguments` or `ambiguous option` from the engine's argument parser
startup-failure-invalid-argument-cause = A flag or a flag's value is not one this engine version accepts.
startup-failure-invalid-argument-action = Run `roofline flags` for the installed engine's own list, fix the flag the error names, then serve.
startup-failure-context-above-model-symptom = `User-specified max_model_len … is greater than the derived max_model_len`
startup-failure-context-above-model-cause = The context length is above the model's `max_position_embeddings` in its config.json.
startup-failure-context-above-model-action = Lower the context length to the model's limit (the VRAM calculator shows it); raise it only with rope scaling the model supports.
startup-failure-none = The engine exited before it became healthy; no row of the startup-failure table matches. Read the log.

## Profiles
profiles-title = Launch profiles
profiles-hint = Profiles are read-only here; import and export them with `roofline profile import` and `roofline profile export`.
profile-open-engine = Open engine
profile-file = Profile file
profile-untranslated = These speculative settings have no SGLang flag and are left out: { $keys }
profile-issue-syntax = cannot be read: { $detail }
profile-issue-unknown-key = unknown key (did you mean { $suggestion }?)
profile-issue-required = is required
profile-issue-not-positive-integer = must be a positive integer, got "{ $value }"
profile-issue-fraction-range = must be a number in (0, 1], got "{ $value }"
profile-issue-fraction-above-advised = { $value } is above the advised 0.85–0.92
profile-issue-fraction-oom-risk = { $value } is above 0.95: expect OOM in prefill
profile-issue-port-range = must be a port from 1 to 65535, got "{ $value }"
profile-issue-bad-name = "{ $value }" is not a valid profile name (lowercase letters, digits, - and _)
profile-issue-bad-host = "{ $value }" is not an IP address or host name
profile-issue-bad-word = "{ $value }" must be one word and not start with -
profile-issue-not-json-object = must be a JSON object: { $detail }
profile-issue-reserved-env = { $value } is set by the console for air-gap and cannot be overridden
profile-issue-bad-env-name = "{ $value }" is not a valid environment variable name
profile-issue-relative-model-path = "{ $value }" must be an absolute path under the models root
profile-issue-unknown-engine = host configuration defines no engine installation "{ $value }"
profile-issue-env-not-allowed = a profile cannot set { $value }: { $reason ->
    [linker] the dynamic linker loads the libraries it names
    [python] Python loads code from what it names
    [runs] it chooses what runs
    [loads] it names a file, directory, library or code to load
   *[not-listed] not in the allowed list (host configuration can add it: [launch] allow_env)
    }
profile-issue-flag-not-allowed = { $value } is refused: { $reason ->
    [abbreviation] argparse would read it as { $flag }; write the flag out in full
    [ambiguous] it begins several flags ({ $flag }); write the flag out in full
    [unknown] the installed engine has no such flag (closest: { $flag })
    [unverifiable] the installed engine's flags could not be read to check it ({ $flag })
    [load-format] only { $flag } (other formats unpickle, which can run code)
    [unclassified] the console does not know what the engine does with this flag's value ({ $flag }), so it cannot check it; a host administrator can allow the flag for an installation ([engines.NAME] allow_flags)
    [not-a-choice] the installed engine takes only { $flag }
    [relative-path] a path must be absolute, inside the models root ({ $flag })
    [endpoint] the engine would bind or connect beyond this host ({ $flag }); only loopback addresses pass
    [json-key] the console does not accept this part of the JSON value ({ $flag })
    [not-json] the value is not the JSON the engine expects ({ $flag })
    [word] the value is not a plain name ({ $flag })
    [positional] no flag takes this word as its value
   *[code] it makes the engine load code; only host configuration can allow it for an installation ([engines.NAME] allow_flags)
    }
profile-issue-flag-repeats-field = { $value } is refused: { $flag } comes from { $field }; set that field instead
profile-issue-path-outside-models = "{ $value }" is outside the models root

## Errors
error-no-such-profile = There is no profile named { $name }.
error-no-such-engine = Profile { $profile } names engine installation { $engine }, which host configuration does not define.
error-port-busy = Port { $port } is in use by { $owner }.
error-generic = { $detail }

## Durations
duration-hm = { $h } h { $m } min
duration-ms = { $m } min { $s } s
duration-s = { $s } s
# Units after a number ($value is already formatted for the language).
value-ms = { $value } ms
value-s = { $value } s
value-gib = { $value } GiB
value-gib-of = { $used } / { $total } GiB
value-w = { $value } W
value-w-of = { $used } / { $total } W
value-mhz = { $value } MHz
value-c = { $value } °C
time-utc-title = UTC: { $utc }

## Navigation (gate steps)
nav-bench = Benchmarks

## Gate steps on the engine page
run-title = Runs: smoke-toolcall and bench
run-hint = The runbook's checks after health: tool calling through the parser and chat template, then latency and throughput with vllm bench serve's definitions. A profile change gets the same checks in its gate.
run-start-smoke = Run smoke-toolcall
run-start-bench = Run bench
run-smoke = smoke-toolcall
run-bench = bench
run-running = running
run-error = error
run-passed = passed
run-failed = failed
run-done-of = { $done } of { $total } done, { $failed } failed
run-open-result = Open the result
bench-requests = Requests
bench-concurrency = Concurrency
bench-input-len = Input tokens
bench-output-len = Output tokens

## smoke-toolcall
smoke-title = Last smoke-toolcall
smoke-case = Case
smoke-verdict = Verdict
smoke-checks = Failed checks
smoke-raw = Raw answers
smoke-pass = PASS
smoke-fail = FAIL
smoke-skip = SKIP
smoke-case-preflight = Preflight: launch flags and parser names
smoke-case-auto-nonstream = auto, non-stream
smoke-case-auto-stream = auto, stream (equal to non-stream)
smoke-case-required = tool_choice required
smoke-case-named = tool_choice named
smoke-case-none = tool_choice none
smoke-case-second-turn = Second turn with the tool result
smoke-case-parallel = Parallel calls
smoke-case-zero-arguments = Zero-argument tool
smoke-case-repeated-streams = Repeated streams
smoke-check-no-choices = no choices in the answer
smoke-check-args-not-string = arguments are not a string
smoke-check-bad-chunk = a stream chunk is not JSON
smoke-check-no-done = the stream never ended
smoke-check-role-deltas = wrong number of role deltas
smoke-check-finish-count = wrong number of finish reasons
smoke-check-finish-reason = unexpected finish_reason
smoke-check-markup-leak = tool markup leaked into the text
smoke-check-call-count = wrong number of tool calls
smoke-check-content-with-calls = text beside the tool calls
smoke-check-duplicate-id = two calls share an id
smoke-check-missing-id = a call has no id
smoke-check-fragments = id or name streamed more than once
smoke-check-wrong-name = wrong tool called
smoke-check-unknown-tool = a tool that was not offered
smoke-check-args-not-json = arguments are not JSON
smoke-check-args-schema = arguments do not match the schema
smoke-check-args-value = unexpected argument values
smoke-check-content-missing = the answer lacks the tool result
smoke-check-request = the request failed
smoke-check-http-status = the server answered with an error
smoke-check-bad-json = the answer is not JSON
smoke-check-stream-differs = stream and non-stream differ
smoke-check-no-parser = no tool-call parser configured
smoke-check-no-auto-tool-choice = auto tool choice not enabled
smoke-check-parser-unknown = parser name unknown to the installed engine

## Benchmarks
bench-title = Benchmarks
bench-hint = Every bench run is kept with its profile, engine version and parameters. Tick two or more to compare them.
bench-empty = No bench runs yet: run one from an engine page or with `roofline bench`.
bench-compare = { $count ->
    [one] Compare { $count } run
   *[other] Compare { $count } runs
    }
bench-compare-title = Bench runs side by side
bench-version = Engine version
bench-load = Load
bench-req-s = Requests/s
bench-tok-s = Output tokens/s
bench-ttft-p50 = TTFT p50 (ms)
bench-ttft-p95 = TTFT p95 (ms)
bench-ttft-p99 = TTFT p99 (ms)
bench-tpot-p50 = TPOT p50 (ms)
bench-tpot-p95 = TPOT p95 (ms)
bench-itl-p95 = ITL p95 (ms)
bench-e2el-p95 = E2E latency p95 (ms)
bench-failed = Failed requests

## Live signals (fleet)
state-hung = hung
# The monitor's hang verdicts ($held: seconds the verdict has held).
hang-flat = { $pending } { $pending ->
    [one] request
   *[other] requests
    } pending, no token, prompt token or engine step in { $seconds } s (hung for { $held } s)
hang-probe = /health answers but a one-token completion got no answer in { $seconds } s (hung for { $held } s)
hang-no-connection = the API server answers no connection: /health has got no answer for { $seconds } s (hung for { $held } s)
col-waiting = Waiting
col-kv = KV cache
col-ttft-p95 = TTFT p95
col-itl-p95 = ITL p95
col-running = Running
col-probe = Completion probe

## Charts (engine page)
charts-title = Live charts
timeline-title = State over the range
timeline-empty = No state recorded in this range yet.
timeline-summary = { $starts ->
    [one] one start
   *[other] { $starts } starts
    }, { $incidents ->
    [0] never hung or dead
    [one] hung or dead once
   *[other] hung or dead { $incidents } times
    }
range-label = Time range
range-15m = 15 min
range-1h = 1 hour
range-24h = 24 hours
range-7d = 7 days
range-30d = 30 days
chart-queue = Requests: running and waiting
chart-kv = KV cache usage, %
chart-preemptions = Preemptions per second
chart-latency = Latency percentiles, ms
chart-prefix-hit = Prefix-cache hit rate, %
chart-throughput = Throughput, tokens/s
chart-gpu-memory = GPU memory, GiB
chart-gpu-load = GPU utilisation (%) and temperature (°C)
series-time = Time
series-running = running
series-waiting = waiting
series-kv-usage = KV cache
series-preemptions = preemptions/s
series-ttft-p50 = TTFT p50
series-ttft-p95 = TTFT p95
series-ttft-p99 = TTFT p99
series-tpot-p50 = TPOT p50
series-tpot-p95 = TPOT p95
series-tpot-p99 = TPOT p99
series-e2e-p95 = E2E p95
series-queue-p95 = queue time p95
series-prefix-hit = hit rate
series-prompt-tps = prompt tokens/s
series-generation-tps = generated tokens/s
series-gpu-memory-used = used
series-gpu-memory-total = total
series-gpu-util = utilisation %
series-gpu-temp = temperature °C
chart-engine-not-running = The engine is not running: nothing to collect.
chart-no-metrics = No metrics from this engine: { $reason }
chart-waiting = Waiting for the first scrapes of /metrics.
chart-nosource-queue = This { $engine } engine's /metrics has no running/waiting gauges (metrics disabled, or renamed in this version).
chart-nosource-kv = This { $engine } engine's /metrics has no KV cache usage gauge.
chart-nosource-preemptions = This { $engine } engine exports no preemption counter (SGLang reports retractions only in versions that have num_retracted_requests_total).
chart-nosource-latency = No request finished in the window, or this { $engine } engine exports no latency histograms.
chart-nosource-prefix-hit = No prefix-cache queries in the window, or this { $engine } engine has prefix caching off.
chart-nosource-throughput = This { $engine } engine exports no token counters yet (no request served since it started).
chart-nosource-gpu = No GPU runs a process of this engine.
chart-nosource-gpu-simulated = A simulated engine uses no GPU.

## GPUs
gpu-title = GPUs
gpu-no-driver = No NVIDIA driver on this host, so no GPU readings ({ $reason }).
gpu-driver = Driver { $driver }
gpu-col-name = GPU
gpu-col-memory = Memory
gpu-col-util = Utilisation
gpu-col-temp = Temperature
gpu-col-power = Power / limit
gpu-col-clock = SM clock
gpu-col-throttle = Throttle reasons
gpu-col-processes = Processes
gpu-foreign = foreign

## Fleet across hosts
state-unreachable = unreachable
col-host = Host
col-gpu-mem = GPU memory
col-gpu-temp = GPU temp.
col-tpot-p95 = TPOT p95
host-local = this host
sort-by = Sort by { $column }
fleet-unreachable-host = Host { $host } did not answer: { $reason }

## Incidents: triage wizard, timeline, postmortem
nav-incidents = Incidents
incidents-title = Incidents
incidents-empty = No incidents. Open one from an engine page, with `roofline triage --profile NAME`, or from an Alertmanager webhook.
incident-open = Open incident
incident-open-hint = Captures metrics, logs, GPU state and the profile first, then walks the triage.
incident-clients-errors = Clients see errors although the engine looks healthy
incident-title = Incident #{ $id }: { $profile }
incident-opened = Opened
incident-opened-by = Opened by
incident-status-open = open
incident-status-resolved = resolved
incident-steps = Triage: health → metrics → GPU → logs
incident-diagnosis = Diagnosis
incident-no-finding = No runbook row matches: the engine looks healthy.
incident-also = Also holds
incident-after-upgrade = after an upgrade
incident-after-upgrade-note = A change shortly before the symptoms: run smoke-toolcall first. Rollback: stop this profile and serve the previous one (profiles are kept until they pass the gate).
incident-action-col = Action
incident-actions = Actions, one at a time
incident-action-smoke = Run smoke-toolcall
incident-action-edit-profile = Propose a profile change for review: { $change }
incident-action-serve = Serve
incident-action-stop = Stop
incident-action-restart = Restart
incident-action-reason = Reason (goes on the timeline)
incident-action-reason-required = Give a reason first.
incident-action-confirm = { $action }? Health and metrics are checked again afterwards.
incident-restart-not-offered = Restart is not offered: it does not fix a queue or a slow p95 (restart only for a dead, hung or OOM-under-load engine).
incident-latest = After the last action
incident-resolve = Mark resolved
incident-timeline = Timeline
incident-note = Add a note
incident-note-add = Add
incident-investigator = Investigator (whole log)
incident-capture = Captured when the console called it { $state }, before any action
incident-capture-no-stacks = No Python stacks
incident-capture-pid = PID
incident-capture-name = Process
incident-capture-state = State
incident-capture-rss = Memory
incident-capture-stack = Stack
incident-capture-stack-show = Show the stack (py-spy)
incident-capture-log = Log at that moment
incident-verdict = Verdict: { $verdict }
step-health = Health
step-metrics = Metrics
step-gpu = GPU
step-logs = Logs
step-nothing = nothing found
timeline-opened = Incident opened ({ $source }); evidence captured.
timeline-diagnosis = Diagnosis: { $diagnosis }
timeline-action = Action: { $action }. Reason: { $reason }
timeline-outcome-ok = { $action } done: { $detail }
timeline-outcome-failed = { $action } failed: { $detail }
timeline-recheck = Re-checked: engine { $state }; { $diagnosis }
timeline-alert = Alert { $name }: { $status }
timeline-resolved = Marked resolved.
ev-health-status = /health answered { $code } in { $ms } ms
ev-health-none = /health: no answer (000)
ev-probe-ok = one-token completion answered in { $ms } ms
ev-probe-failed = one-token completion: no answer in 5 s
ev-state = process state: { $state }
ev-queue-stuck = requests in the engine { $from } → { $to }, no token generated
ev-metrics-none = no metrics: { $reason }
ev-metrics-empty = no metric samples in the window yet
ev-waiting = waiting { $from } → { $to } in { $minutes } min
ev-kv = KV cache usage { $pct }%
ev-waiting-kv = waiting { $from } → { $to } in { $minutes } min while KV usage is { $pct }%
ev-preemptions = preemptions { $rate }/s
ev-ttft-hit = TTFT p95 { $from } → { $to } ms while the prefix-cache hit rate fell { $hit_from }% → { $hit_to }%
ev-tpot = TPOT p95 { $from } → { $to } ms at the same traffic ({ $running } running)
ev-gpu = GPU { $index }: { $used } / { $total } GiB, { $temp } °C, throttle: { $throttle }
ev-gpu-none = GPU: { $reason }
ev-gpu-foreign = GPU { $index }: foreign process { $pid }
ev-log-line = log line { $line }: { $text }
ev-pin-moved = { $field ->
    [engine] engine
    [driver] NVIDIA driver
    [cuda] CUDA (torch's build)
    [image] image
   *[other] { $field }
    }: pinned { $pinned }, now { $current }; restore the pinned version from the journal
ev-pin-same = { $field ->
    [engine] engine
    [driver] NVIDIA driver
    [cuda] CUDA (torch's build)
    [image] image
   *[other] { $field }
    }: { $current }, as pinned
ev-model-finding = model check: { $file }: { $detail }
ev-log-signature = { $signature } × { $count }, last at line { $line }: { $text }
ev-clients-errors = clients see errors while health and metrics are fine
rule-dead-diagnosis = Process dead or port closed
rule-dead-action = Read the last error in the log, check that GPU memory was released, then serve.
rule-hung-diagnosis = Engine hung (often after a CUDA error or an NCCL timeout under TP)
rule-hung-action = Search the log for CUDA error, NCCL, watchdog; then restart.
rule-kv-exhausted-diagnosis = KV cache exhausted, requests are waiting
rule-kv-exhausted-action = Lower max-model-len or use fp8 KV in the profile; throttle clients for now.
rule-seq-capped-diagnosis = Capped by max-num-seqs or decode compute
rule-seq-capped-action = Raise max-num-seqs after a bench; a second replica.
rule-preemptions-diagnosis = KV overflows under load, requests are recomputed
rule-preemptions-action = As for the KV cache; a preemption doubles prefill.
rule-prefix-miss-diagnosis = Clients send a new prefix, the cache is not working
rule-prefix-miss-action = Verify the system prompt and session-based routing.
rule-tpot-neighbor-diagnosis = A neighbour process on the GPU, thermal or power throttling
rule-tpot-neighbor-action = Check the GPUs: processes, temperature, watts.
rule-proxy-parser-diagnosis = Proxy, timeouts or parser
rule-proxy-parser-action = Run smoke-toolcall against the proxy endpoint; compare the proxy timeout with e2e p99.
rule-oom-start-weights-diagnosis = OOM at startup: the weights do not fit under this TP
rule-oom-start-weights-action = Size it with the VRAM calculator; more TP, FP8 weights or another GPU.
rule-oom-start-kv-diagnosis = OOM at startup: no KV cache left for one request after the weights
rule-oom-start-kv-action = Lower max-model-len, raise the memory fraction, or fp8 KV.
rule-oom-under-load-diagnosis = OOM under load: prefill of a long prompt crashed the engine
rule-oom-under-load-action = Memory fraction 0.88–0.90, enable chunked prefill, max-num-batched-tokens 8192; then restart.
rule-start-gpu-memory-taken-diagnosis = Startup failed: another process holds the GPU memory
rule-start-gpu-memory-taken-action = Find the foreign process on the GPU; lower the memory fraction only if it must stay.
rule-start-address-in-use-diagnosis = Startup failed: the port is in use
rule-start-address-in-use-action = Stop the other profile or process on the port, then serve.
rule-start-incomplete-weights-diagnosis = Startup failed: config.json or tokenizer missing (incomplete weight transfer)
rule-start-incomplete-weights-action = Copy the model directory again and verify it, then serve.
rule-start-unsupported-arch-diagnosis = Startup failed: the engine does not know this architecture
rule-start-unsupported-arch-action = Use an engine version that supports the model (or its plugin).
rule-start-driver-mismatch-diagnosis = Startup failed: driver, CUDA and torch do not match
rule-start-driver-mismatch-action = Align the driver with the engine's CUDA build.
rule-start-invalid-argument-diagnosis = Startup failed: the engine refused its command line
rule-start-invalid-argument-action = Fix the flag the parser names (`roofline flags` lists what this version accepts), then serve.
rule-start-context-above-model-diagnosis = Startup failed: the context length is above the model's limit
rule-start-context-above-model-action = Lower the context length to the model's max_position_embeddings, then serve.
rule-start-failed-diagnosis = Startup failed: the engine exited on the error cited (no row of the startup-failure table names it)
rule-start-failed-action = Read the cited root-cause line and the traceback before it; fix that, then serve.
postmortem-title = Postmortem
postmortem-heading = Postmortem: incident { $id } ({ $profile })
postmortem-status = Status
postmortem-draft = draft
postmortem-final = final
postmortem-symptom = Symptom
postmortem-timeline = Timeline
postmortem-metrics = Metrics before and after
postmortem-before = Before
postmortem-after = After
postmortem-root-cause = Root cause
postmortem-what-changed = What changed
postmortem-catch-earlier = What to add to bench or smoke to catch it earlier
postmortem-window = waiting { $waiting }, KV { $kv }, TTFT p95 { $ttft }, TPOT p95 { $tpot }, preemptions { $preemptions }
postmortem-save-draft = Save draft
postmortem-save-final = Save as final
postmortem-saved = Saved.
postmortem-export = Export Markdown

## VRAM calculator
nav-vram = VRAM
vram-title = VRAM calculator
vram-intro = Will the model fit, how many tokens of KV cache will the engine get, and how many requests of this length run at once. The same calculation as `roofline vram`; after an engine starts, `roofline vram --profile NAME` compares it with the engine's own log.
vram-model = Model (under the models root)
vram-weights-gib = Weights, GiB (blank: from the model files)
vram-gpu-gib = GPU memory, GiB
vram-tp = Tensor parallel
vram-util = Memory utilisation
vram-ctx = Context length, tokens
vram-kv-dtype = KV cache dtype
vram-concurrency = Requests at once (optional)
vram-paste-config = Or paste a config.json
vram-choose = Choose a model or paste a config.json.
vram-need-weights = Give the weight size in GiB: a pasted config.json has no weights files.
vram-weights-per-gpu = Weights per GPU
vram-kv-per-token = KV bytes per token per GPU
vram-kv-tokens = KV cache size, tokens
vram-max-concurrency = Maximum concurrency at this context
vram-max-ctx = Longest context that fits
vram-budget = KV budget per GPU
vram-verdict-fits = Fits.
vram-verdict-weights-do-not-fit = Does not fit: the weights alone exceed the GPU's share. More TP, FP8 weights or a larger GPU.
vram-verdict-overhead-does-not-fit = Does not fit: the weights fit, but not with the activation peak, non-torch memory and CUDA graphs the engine needs (or the KV size given). Lower the batch (max batched tokens), the KV size, or raise TP.
vram-verdict-kv-too-small = Does not fit: no KV cache left for one request of this context. Lower the context, raise utilisation, or fp8 KV.
vram-verdict-context-above-max = The context is longer than the model's max_position_embeddings.
vram-verdict-concurrency-queues = Starts, but that many requests at once will queue: KV holds fewer.

## Change journal
nav-journal = Journal
journal-title = Change journal
journal-intact = Hash chain verified: { $count ->
    [one] { $count } entry
   *[other] { $count } entries
}, none edited or missing.
journal-broken = The journal was tampered with: entry #{ $seq } { $why }.
journal-alarm = The change journal refuses new entries: { $why }. Actions still run; their entries wait in the spool until an admin restores a backup (`roofline restore`).
database-away = The shared database has not answered since
database-away-detail = This host runs in its degraded mode: its engines keep running and you can serve, stop and restart them here; other hosts, accounts, changes and history wait for the database; journal entries are kept and written, in order, when it is back.
journal-search = Search
journal-export = Export JSON
journal-empty = Nothing recorded yet.
journal-at = When
journal-who = Who
journal-kind = What
journal-reason = Why
journal-detail = Context

## Profile editor
editor-title = Edit profile { $name }
editor-back = Back to the profile
editor-intro = Fields in the runbook's flag order; a step opens once the steps before it are valid. The command line follows as you type; switching to an installation of the other engine converts the flags.
editor-step-model = 1. Model and name
editor-step-parallelism = 2. Parallelism
editor-step-context = 3. Context
editor-step-memory = 4. Memory
editor-step-parsers = 5. Parsers
editor-step-quantization = 6. Quantization and KV cache
editor-step-batching = 7. Batching
editor-step-speculation = 8. Speculative decoding
editor-step-network = 9. Address and extra arguments
editor-argv-invalid = Fix the errors above to see the command line.
editor-check-flags = Check flags against the installed engine
editor-flags-ok = Every flag is known to the installed engine ({ $version }).
editor-diff = Change against the active version
editor-no-change = No change yet.

## Accounts and sign-in
error-unauthorized = Sign in first ({ $detail }).
error-forbidden = Not allowed: { $detail }
error-too-many = Not now: { $detail }
nav-sign-in = Sign in
nav-sign-out = Sign out
nav-accounts = Accounts
nav-changes = Changes
role-viewer = viewer
role-operator = operator
role-approver = approver
role-admin = admin
login-title = Sign in
login-needs-setup = No accounts exist yet. The console log shows a one-time setup secret for the first admin.
login-already = Signed in as { $name }.
login-name = User name
login-password = Password
login-submit = Sign in
login-error-wrong = User name or password is wrong.
login-error-wait = Too many failed sign-ins for this name or from this address. Try again in { $seconds ->
    [one] { $seconds } second
   *[other] { $seconds } seconds
}.
login-error-busy = The console is busy checking passwords. Try again in a few seconds.
login-error-failed = Signing in failed on the console; its log has the details.
setup-title = Create the first admin
setup-intro = Paste the one-time setup secret from the console's log. It works once; afterwards admins create accounts on the Accounts page.
setup-secret = Setup secret
setup-submit = Create admin and sign in
password-rule = At least { $min } characters; a passphrase is best.
account-title = Your account
account-old-password = Current password
account-new-password = New password
account-change-password = Change password (signs out everywhere)
accounts-title = Accounts
accounts-role = Role
accounts-initial-password = Initial password
accounts-create = Create account
accounts-state = State
accounts-created = Created
accounts-enable = Enable
accounts-disable = Disable
accounts-disabled = disabled

## Profile changes: review, approval, gate
profile-propose = Propose a change
editor-editing-change = Reworking change #{ $id }.
editor-save-draft = Save draft
editor-submit = Submit for review
editor-review-hint = A change becomes active only after another person approves it and its gate passes: the candidate is served, then health, smoke-toolcall and a bench must pass.
changes-title = Changes
changes-intro = Proposed profile changes, their review and their gate.
changes-empty = No changes yet.
change-title = Change #{ $id } to { $profile }
change-author = Author
change-state = State
change-updated = Updated
change-stale = The active profile changed since this change was written. Rework it against the current profile and submit again.
change-edit = Edit
change-withdraw = Withdraw
change-start-gate = Start the gate
change-content-hash = Content (SHA-256); an approval approves exactly this
engine-current-incident = Incident #{ $id } is open for this engine: triage, actions and the postmortem
change-note-label = A comment on this change
change-lines = The lines as written
change-key = Key
change-before = Before (active)
change-after = After (this change)
change-key-unset = not set
change-rendered-by = Command line and flags as { $host } renders them with its own configuration: the host that runs this engine.
change-render-note = The engine's host did not render this change ({ $why }); shown as this console's configuration renders it. That host checks the profile again before it starts the engine.
change-extra-flags = Extra flags, as the launch policy read them
flag-class = { $class ->
    [switch] a switch: no value
    [number] a number or size
    [choice] one of the values the installed engine lists
    [checked] checked: paths inside the models root, loopback addresses, known JSON keys
    [allowed] allowed by this host's configuration ([engines.NAME] allow_flags), not checked
   *[unverified] not checked here: the server checks it against the installed engine
    }
change-argv = Command line
change-argv-same = The command line does not change (the change touches only what the console keeps, not the engine's flags).
change-verdicts = VRAM calculator
change-verdict-detail = KV cache for { $tokens } tokens: { $concurrency } requests of { $ctx } tokens at once; KV budget { $budget } GiB per GPU.
change-comment = Comment
change-approve = Approve
change-request-changes = Request changes
change-rollback = Roll back to the previous profile
change-gate = Gate
change-gate-thresholds = Bench: { $requests } requests at concurrency { $concurrency }; must have at most { $failed } failed, TTFT p95 ≤ { $ttft } ms, TPOT p95 ≤ { $tpot } ms.
change-gate-none = The gate has not run yet.
change-bench-run = Open the gate's bench run
change-history = History
change-state-draft = draft
change-state-submitted = in review
change-state-changes-requested = changes requested
change-state-approved = approved
change-state-gating = gate running
change-state-gate-failed = gate failed
change-state-active = active
change-state-rolled-back = rolled back
change-state-withdrawn = withdrawn
change-event-drafted = saved a draft
change-event-submitted = submitted for review
change-event-approved = approved
change-event-changes-requested = requested changes
change-event-withdrawn = withdrew the change
change-event-gate-started = started the gate
change-event-gate-passed = gate passed: the change is active
change-event-gate-failed = gate failed: the previous profile stays
change-event-rolled-back = rolled back to the previous profile
change-gate-step-serve = Serve the candidate
change-gate-step-health = Health and one-token completion
change-gate-step-smoke = smoke-toolcall
change-gate-step-bench = Bench thresholds
change-gate-step-restore = Serve the previous profile again
change-gate-step-activate = Make the candidate active
change-check-failed = Failed requests
change-check-ttft-p95 = TTFT p95
change-check-tpot-p95 = TPOT p95
change-check-output-throughput = Output throughput
change-check-client = Bench client
change-gate-running = running…
change-rollback-reason = Reason (goes into the journal)
change-gate-serve-started = started (pid { $pid })
change-gate-serve-running = already running (pid { $pid })
change-gate-health-ok = /health answered in { $health_ms } ms, one token in { $completion_ms } ms
change-gate-smoke-ok = cases passed: { $count }
change-gate-smoke-failed = failed cases: { $cases }
change-gate-bench-ok = { $requests } requests; TTFT p95 { $ttft } ms, TPOT p95 { $tpot } ms
change-gate-bench-failed = over the thresholds: { $checks }
change-gate-restore-ok = the previous profile serves again (pid { $pid })
vram-check-title = KV cache: prediction against the engine
vram-check-line = Predicted { $predicted } tokens, the engine reported { $observed } (error { $error }%), for a { $gpu } GiB GPU ({ $source }).
vram-check-concurrency = Maximum concurrency: { $observed }x reported, { $predicted }x predicted.
accounts-password = Password
accounts-set-password = Set (ends their sessions)
needs-operator = Needs the operator role
unit-ms = ms
unit-tok-s = tok/s
change-check-client-ok = kept its schedule
change-check-client-overloaded = fell behind its schedule
change-check-client-limit = must keep its schedule
vram-check-source-nvml = NVML
vram-check-source-simulator = the simulator's GPU
change-event-commented = commented
change-add-comment = Comment
investigator-no-row = no runbook row: the log shows no failure
investigator-action = Runbook action: { $action }
rule-gpu-fault-diagnosis = GPU fault: the driver reported a hardware error next to the engine's failure
rule-gpu-fault-action = Hardware, not the profile: move the engine off that GPU (CUDA_VISIBLE_DEVICES), check `nvidia-smi -q` and dmesg, reset or replace the GPU before serving on it again.
ev-stalled-phase = Stalled in { $phase ->
    [launched] process start
    [loading-weights] weight loading
    [profiling] memory profiling
    [allocating-kv-cache] KV cache allocation
    [capturing-graphs] CUDA graph capture
    [starting-server] HTTP server start
   *[other] { $phase }
}: { $elapsed } s so far, { $median } s median over { $starts ->
    [one] { $starts } earlier start
   *[other] { $starts } earlier starts
}
ev-gpu-xid = { $seconds } s before: Xid { $xid } on GPU { $index }: { $meaning } ({ $blame ->
    [hardware] hardware
    [driver] driver or firmware
   *[application] usually the application
})
ev-gpu-ecc = GPU { $index }: { $count } uncorrected ECC errors{ $pending ->
    [yes] , memory repair pending (reset needed)
   *[no] {""}
}
startup-timeline-title = Startup phases: the last start against the one before
startup-timeline-phase = Phase
startup-timeline-this = Last start
startup-timeline-previous = The start before
vram-check-memory = KV pool: { $observed } GiB reported, { $predicted } GiB predicted.
vram-check-calibrated = Calibrated from the start at { $at }.

change-gate-step-vram = VRAM calculator
change-gate-vram-fits = fits: { $tokens } KV tokens, { $concurrency }x requests of { $ctx } tokens{ $calibrated ->
    [yes] {" "}(calibrated from the last start)
   *[no] {""}
}
change-gate-vram-concurrency-queues = starts: { $tokens } KV tokens, { $concurrency }x requests of { $ctx } tokens; the asked concurrency will queue{ $calibrated ->
    [yes] {" "}(calibrated from the last start)
   *[no] {""}
}
change-gate-vram-weights-do-not-fit = does not fit: the weights alone exceed the GPU's share; the active engine was left running
change-gate-vram-overhead-does-not-fit = does not fit: the weights fit, the engine's overhead on top of them does not; the active engine was left running
change-gate-vram-kv-too-small = does not fit: no KV cache for one request of { $ctx } tokens ({ $tokens } tokens); the active engine was left running
change-gate-vram-context-above-max = does not fit: { $ctx } tokens is longer than the model's max_position_embeddings; the active engine was left running
change-gate-vram-marginal = may not fit ({ $verdict } at the central value, fits within the range): the start decides
change-gate-vram-unknown = no prediction ({ $reason }): the start decides

vram-marginal = Near the edge: within the range the unknown inputs allow, the verdict changes.
vram-gpu = GPU
vram-engine-version = Engine version
vram-concurrency-at = Requests of { $ctx } tokens at once
vram-path = Engine path
vram-not-calibrated = Not calibrated yet: the profile has no start on this GPU, engine version, model and TP.
vram-arithmetic = The arithmetic
vram-profile-title = A profile on this host
vram-profile = Profile
editor-vram = Predict GPU memory
editor-vram-breakdown-show = Show the breakdown
editor-vram-breakdown-hide = Hide the breakdown
editor-default = default: { $value }
editor-flag-deprecated = This version marks the flag deprecated.
editor-verdict-line = KV cache for { $tokens } tokens: { $concurrency } requests of { $ctx } tokens at once.
advice-MODEL = The directory of the weights under the models root (safetensors, config.json, the tokenizer files).
advice-SERVED_MODEL_NAME = Clients address the model by this name, not by its path.
advice-TENSOR_PARALLEL = Match the GPU count in the NVLink group.
advice-CONTEXT_LENGTH = Do not set the model's maximum out of habit: take the value from the calculator below.
advice-MEM_FRACTION = 0.85–0.92; above 0.95 prefill runs out of memory.
advice-TOOL_CALL_PARSER = Per model family; after the start, smoke-toolcall checks it.
advice-REASONING_PARSER = Per model family, for models that think before they answer.
advice-QUANTIZATION = Only after measuring quality against the unquantised model.
advice-KV_CACHE_DTYPE = fp8 KV holds about twice the tokens; only after measuring quality.
advice-MAX_RUNNING_REQUESTS = Batching comes after the model runs: change it with a bench before and after.
advice-MAX_BATCHED_TOKENS = Tokens per scheduler step (prefill chunk); with the calculator, a bench before and after.
advice-SPECULATIVE_CONFIG = Last, after a bench without it.

nav-models = Models
models-title = Model directories
models-intro = The directories under the models root. Verify one before serving it on an air-gapped host: config.json, tokenizer.json, tokenizer_config.json with a chat template and generation_config.json present; safetensors only (pickle files can run code when loaded); the index and the shards agree; every file matches SHA256SUMS. Files hashed once are not read again while unchanged.
models-none = No model directories under the models root.
models-verify = Verify
models-progress = Hashing: { $pct }% ({ $done } of { $total } GB, { $files } of { $count } files)
models-verified = Verified: { $files } files, { $gb } GB; { $hashed } hashed, { $cached } from the cache, in { $ms } ms.
models-not-verified = Not verified: { $files } files, { $gb } GB; { $hashed } hashed, { $cached } from the cache, in { $ms } ms.
models-manifest-checked = Every file matches SHA256SUMS.
models-manifest-unchecked = Hashes not checked.
model-finding-missing = a required file is missing
model-finding-no-chat-template = no chat template
model-finding-pickle = pickle weights refused
model-finding-index = the safetensors index cannot be read
model-finding-header = a safetensors header cannot be read
model-finding-shard-size = the shard's size does not match its header
model-finding-index-mismatch = the index and the shard disagree
model-finding-shard-missing = a shard the index lists is missing
model-finding-shard-unindexed = a shard the index does not list
model-finding-no-safetensors = no safetensors weights
model-finding-weights-simulated = no weights: the engine is the simulator, which loads none
model-finding-no-manifest = no SHA256SUMS manifest
model-finding-manifest = the manifest cannot be read
model-finding-not-in-manifest = not in the manifest
model-finding-manifest-missing-file = a file the manifest lists is missing
model-finding-unreadable = the file cannot be read
model-finding-hash-mismatch = the SHA-256 does not match the manifest
model-finding-not-hashed = not hashed yet
model-finding-broken-link = a broken link
model-finding-link-outside = a link out of the models root
model-finding-link-dir = a link to a directory
model-finding-too-deep = nested too deep
model-finding-special-file = not a regular file
model-finding-odd-name = a file name the manifest cannot hold
change-gate-step-metrics = Metric names the console reads
change-gate-metrics-ok = every signal the console reads is served
change-gate-metrics-warned = served without { $signals }; the console does without them
change-gate-metrics-failed = no source for { $signals }: the fleet page and the triage would be blind
change-gate-metrics-unknown = not checked ({ $reason })
change-gate-step-model = Model directory
change-gate-model-ok = verified: files { $files }, warnings { $warnings }{ $manifest ->
    [yes] ; every file matches SHA256SUMS
   *[no] ; hashes not checked
}
change-gate-model-failed = { $error }
change-gate-model-warned = not verified, the host only warns: { $error }

## Upgrade preflight (the editor, when the installation changes)
upgrade-title = Upgrade preflight
upgrade-check-again = Check again
upgrade-versions = From { $from } ({ $fromVersion }) to { $to } ({ $toVersion }), for the profile as edited
upgrade-verdict-clear = Nothing here stops the start: propose the change, and the gate serves and checks it.
upgrade-verdict-blocked = { $count ->
    [one] One finding stops the start
   *[other] { $count } findings stop the start
    }: fix the profile before proposing the change.
upgrade-finding-removed = { $flag }: the new version has no such flag; the engine would refuse to start
upgrade-finding-renamed = { $flag } is now { $to }
upgrade-finding-retyped = { $flag } was { $from }, now takes { $to }
upgrade-finding-value-gone = { $flag } { $value }: no longer among the new version's choices
upgrade-finding-deprecated = { $flag } is deprecated in the new version: { $help }
upgrade-finding-default-changed = { $flag } is left to the engine, whose default moves from { $from } to { $to }
upgrade-closest = (closest: { $suggestion })
upgrade-other-defaults = { $count ->
    [one] The default of { $count } flag this profile does not use moves
   *[other] The defaults of { $count } flags this profile does not use move
    }
upgrade-metrics-unchecked = Metric names: checked when a change's gate serves this installation.
upgrade-metrics-ok = Metric names: the gate of change #{ $change } found every signal the console reads.
upgrade-metrics-missing = The gate of change #{ $change } found no { $signal } signal (the console reads { $names })
upgrade-keep-old = The profile as it runs now stays stored: the change goes through review and the gate, smoke-toolcall first, and one rollback restores it.

## Pinned versions (the profile page)
profile-known-good = Known-good set
profile-known-good-none = No start recorded yet: the set is pinned at the next healthy start.
profile-known-good-when = Pinned { $at } on { $install }; restore these after a failed upgrade (the journal keeps every set).
profile-known-good-bench = Gate bench (run #{ $run }): TTFT p95 { $ttft } ms, TPOT p95 { $tpot } ms, { $throughput } tok/s output
profile-known-good-no-bench = No gate bench on this set yet.
pin-field-engine = Engine version
pin-field-torch = torch
pin-field-cuda = CUDA (torch's build)
pin-field-driver = NVIDIA driver
pin-field-image = Image digest
value-kilo-tokens = { $value }k
value-mega-tokens = { $value }M
vram-gpu-pick = GPU
vram-gpu-custom = Typed in (below)
vram-gpu-host = This host (NVML)
vram-gpu-host-option = GPU { $index }: { $name }, { $gib } GiB usable
vram-gpu-host-total = NVML total { $gib } GiB, less what the driver reserves for itself
vram-gpu-host-none = This host: { $reason }
vram-gpu-common = Common devices (the size CUDA reports)
vram-bars-title = { $n ->
    [one] Memory of the GPU ({ $gpu })
   *[other] Memory of each of the { $n } GPUs ({ $gpu } each)
    }
vram-bar-gpu = GPU { $n }
vram-bar-more = { $n ->
    [one] and { $n } more GPU like these
   *[other] and { $n } more GPUs like these
    }
vram-part-weights = Weights
vram-part-activation = Activation peak
vram-part-non-torch = CUDA context, NCCL, graphs
vram-part-kv = KV cache
vram-part-reserve = Left outside by the utilisation
vram-part-overflow = Over the engine's share
vram-curve-title = Requests at once against context length
vram-curve-none = No request fits at any context: the weights leave no KV cache.
vram-curve-chosen = context { $ctx }: { $n } requests at once
vram-curve-one = one request
vram-curve-x = Context length, tokens
vram-curve-y = Requests at once
vram-curve-table = The points as a table
fleet-filter-state = Show engines in state
fleet-filter-all = All { $count }
fleet-search = Search profile, host, model
fleet-group-by-host = Group by host
fleet-shown = showing { $shown } of { $count }
fleet-host-counts = { $count ->
    [one] { $count } engine
   *[other] { $count } engines
    }, { $healthy } healthy{ $trouble ->
    [0] {""}
   *[other] , { $trouble } need attention
    }

## Hosts of a fleet sharing one database, and the jobs they ask of each other
nav-hosts = Hosts
hosts-title = Hosts of this fleet
hosts-intro = The consoles sharing this console's database. An action on another host's engine is queued as a job; that host's console performs it with its own engine control, and every host sees the job here.
hosts-empty = No host has registered yet.
host-col-name = Host
host-col-state = Heard from
host-col-console = Console
host-col-gpus = GPUs
host-col-installations = Engine installations
host-col-version = Version
host-this = (this console)
host-reachable = { $seconds } s ago
host-unreachable = unreachable: no heartbeat for { $seconds } s
host-no-gpus = no GPU
host-act = act on this engine through its host
jobs-title = Jobs
jobs-empty = No jobs yet.
job-request-title = Ask a host
job-field-host = Host
job-field-profile = Profile
job-field-action = Action
job-field-reason = Reason (journaled)
job-request = Queue the job
job-queued = Job #{ $id } queued for { $host }.
job-col-who = Asked by
job-col-queued = Queued
job-col-outcome = Outcome
job-requested = { $who } on { $host }
job-state-queued = queued
job-state-running = running
job-state-done = done
job-state-failed = failed
job-waits-unreachable = queued: { $host } is unreachable
job-outcome-show = show
job-action-serve = serve
job-action-stop = stop
job-action-restart = restart
job-action-logs = read the log
job-action-smoke = smoke test (tool calls)
job-action-bench = bench
job-action-gate = run a change's gate
job-action-evidence = open an incident (evidence read there)
job-action-incident-action = an incident's action
job-action-render = render a change for its review
job-field-change = Change #
job-field-clients-errors = Clients see errors
job-open-incident = incident #{ $id }
job-open-change = change #{ $id }
