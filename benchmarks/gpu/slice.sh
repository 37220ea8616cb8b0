#!/usr/bin/env bash
# Writes the GPU check's data slice: the first ROWS rows of the WMT19 kk-en DARR file.
#   benchmarks/gpu/slice.sh [SHARED_DATA_DIR] [ROWS]     (defaults: ../shared/data, 4000)
# into .gpu/data/wmt-kk-en.jsonl (ignored by git; carried to the GPU machine with .gpu).
# 4000 rows are 2.6 MB: with the wheels (about 50 MB) the carried folder stays under the 64 MiB
# that travels to the lent GPU machine with the working tree.
set -euo pipefail
cd "$(dirname "$0")/../.."  # the repository
SRC=${1:-../shared/data}/wmt-kk-en.jsonl
ROWS=${2:-4000}
test -f "$SRC" || { echo "slice.sh: $SRC does not exist (the WMT19 kk-en DARR file of ../shared/data)" >&2; exit 2; }
mkdir -p .gpu/data
head -n "$ROWS" "$SRC" > .gpu/data/wmt-kk-en.jsonl
echo "wrote .gpu/data/wmt-kk-en.jsonl: $(wc -l < .gpu/data/wmt-kk-en.jsonl) rows, $(du -h .gpu/data/wmt-kk-en.jsonl | cut -f1)"
