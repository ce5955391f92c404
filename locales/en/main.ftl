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

## Startup phases
phase-launched = Process started
phase-loading-weights = Loading weights
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

## Errors
error-no-such-profile = There is no profile named { $name }.
error-no-such-engine = Profile { $profile } names engine installation { $engine }, which host configuration does not define.
error-port-busy = Port { $port } is in use by { $owner }.
error-generic = { $detail }

## Durations
duration-hm = { $h } h { $m } min
duration-ms = { $m } min { $s } s
duration-s = { $s } s
