#!/usr/bin/env python3
"""Stand-ins for the remote Roofline consoles of a large fleet (the fleet page's browser
bench): N HTTP servers on loopback, each answering `GET /api/engines` with M engines whose
figures move every second, in the console's own `EngineStatus` JSON. Stops by itself after
--seconds (bounded, like every load test here). Python's standard library only.

    fake_consoles.py --base-port 19100 --consoles 50 --engines 20 --seconds 600
"""
import argparse
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATES = ["healthy"] * 46 + ["starting", "unhealthy", "hung", "dead"]


def engines(console: int, count: int, now: float) -> list:
    out = []
    tick = int(now)
    for i in range(count):
        seed = console * 1000 + i
        # One engine in fifty changes state now and then; the rest serve.
        state = STATES[(seed * 7 + tick // 30) % len(STATES)] if seed % 50 == 0 else "healthy"
        wave = math.sin(now / 7.0 + seed)
        live = None
        if state == "healthy":
            live = {
                "window_s": 5.0,
                "running": float(8 + (seed % 13) + round(4 * wave)),
                "waiting": float(max(0, round(6 * wave))),
                "kv_usage": round(0.35 + 0.3 * (wave + 1) / 2, 3),
                "rates": {"preemptions_per_s": 0.0, "prompt_tokens_per_s": 1200.0 + 300 * wave,
                          "generation_tokens_per_s": 400.0 + 100 * wave, "prefix_hit_rate": 0.6},
                "ttft_p50_ms": 120.0 + 40 * wave, "ttft_p95_ms": 400.0 + 120 * wave, "ttft_p99_ms": 900.0,
                "itl_p50_ms": 18.0, "itl_p95_ms": 30.0 + 5 * wave, "itl_p99_ms": 45.0,
                "e2e_p95_ms": 5200.0, "queue_p95_ms": 40.0,
            }
        out.append({
            "profile": f"svc-{i:02d}", "engine": "vllm-0-33", "kind": "vllm", "simulated": False,
            "host": "0.0.0.0", "port": 8000 + i, "state": state, "pid": 1000 + i,
            "uptime_s": 3600 + tick % 86400, "phase": None, "failure": None, "note": None,
            "live": live, "model_name": f"model-{i % 4}", "probe_ms": 35.0, "node": "",
            "scraped_at_ms": int(now * 1000), "health_code": 200 if state == "healthy" else None,
        })
    return out


def serve(port: int, console: int, count: int):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/api/engines":
                self.send_error(404)
                return
            body = json.dumps(engines(console, count, time.time())).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the console gave up on a slow answer: nothing to report

        def log_message(self, *_):
            pass

    class Quiet(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request, client_address):
            pass  # a dropped connection is the client's business in a bench

    Quiet(("127.0.0.1", port), Handler).serve_forever()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-port", type=int, default=19100)
    ap.add_argument("--consoles", type=int, default=50)
    ap.add_argument("--engines", type=int, default=20)
    ap.add_argument("--seconds", type=int, default=600)
    a = ap.parse_args()
    for c in range(a.consoles):
        threading.Thread(target=serve, args=(a.base_port + c, c, a.engines), daemon=True).start()
    print(f"{a.consoles} fake consoles x {a.engines} engines on 127.0.0.1:{a.base_port}..", flush=True)
    time.sleep(a.seconds)


if __name__ == "__main__":
    main()
