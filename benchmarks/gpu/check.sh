#!/usr/bin/env bash
# The GPU check (BENCHMARKS.md "GPU"): exactness and throughput on one GPU, <= 8 min.
#   benchmarks/gpu/slice.sh && benchmarks/gpu/wheels.sh   # here, once: fills .gpu/ (ignored by git)
#   OUT=$OUT benchmarks/gpu/check.sh                     # on the GPU machine, from the repository root, .gpu/ carried
#   benchmarks/gpu/check.sh --device cpu --tiny          # the CPU dry run (benchmarks/tests/test_gpu_check.py)
# Writes $OUT/gpu_check.json and $OUT/gpu_check.log (OUT defaults to out/gpu). GPU_DIR (default
# .gpu) holds data/wmt-kk-en.jsonl, wheels/*.whl and bin/ (wrk); the wheels are installed into a private
# folder (no network, no dependency resolution: the image has the rest).
set -euo pipefail
cd "$(dirname "$0")/../.."  # the repository
PYTHON=${PYTHON:-python3}
DIR=${GPU_DIR:-.gpu}
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
if compgen -G "$DIR/wheels/*.whl" > /dev/null; then
  SITE=$(mktemp -d /tmp/nlgscore-gpu-site.XXXXXX)
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" "$DIR"/wheels/*.whl
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
if [ -x "$DIR/bin/wrk" ]; then  # the load generator of the http section, with its LuaJIT
  BIN=$(cd "$DIR/bin" && pwd)
  export PATH="$BIN:$PATH" LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=${TOKENIZERS_PARALLELISM:-true}
command -v nvidia-smi > /dev/null && nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || true
exec "$PYTHON" -m benchmarks.gpu --data "$DIR/data" --out "$OUT" "$@"
