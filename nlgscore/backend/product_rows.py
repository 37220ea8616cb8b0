"""How many rows a CPU matrix product runs on (:func:`nlgscore.backend.gemm.linear`).

Two constraints meet here. Batch invariance: a row's output must not depend on how many
rows share its product, which both kernels give from :data:`MIN_ROWS` rows up. Memory: oneDNN
compiles and keeps a kernel per input shape, so the row counts a process sees must be few.
:func:`product_rows` pads a product's rows to satisfy both at little cost, and
:func:`split_point` says where a oneDNN product is cut into a bucketed head and a short tail.

>>> rows = product_rows(300); rows, split_point(rows), rows - split_point(rows)
(304, 256, 48)
"""

from __future__ import annotations

__all__ = ["MIN_ROWS", "ROW_BUCKET", "product_rows", "segments", "split_point"]

# oneDNN builds (JIT-compiles) and caches a kernel for every distinct input shape, ~1.3 MB each,
# and that memory is not given back: token-budget batches have a new row count almost every time,
# so 2,000 distinct counts grew the process by 4 GB. A product therefore runs on a multiple of
# MIN_ROWS rows (zero rows added, sliced off), split into a multiple of this many rows and a tail
# of fewer: at most budget/128 + 7 shapes per weight shape (MiniLM at the 2,048-token default: 23
# x 4 weight shapes, ~120 MB, reached early and then flat). Padding every product to a multiple of
# 128 instead cost 7.5% extra rows in runs of 64 WMT pairs, 29% in runs of 16 and 5x for a single
# 25-token text (single-sample reward calls). The split costs one copy that joins the
# two outputs, unless the caller keeps its rows in the two parts (:func:`segments`). Re-measured in
# 256 row counts x 4 weight shapes fill oneDNN's 1,024-primitive cache, and each rebuild
# after an eviction keeps its memory (a second pass over the same shapes grew the process 2.8 GB).
ROW_BUCKET = 128
# Fewest rows a product runs on (both kernels; see "Batch invariance" in nlgscore.backend.gemm): 8
# measured enough on an AMD EPYC (Zen 4), 16 leaves a margin for wider micro-kernels (AMX tiles
# are 16 rows).
MIN_ROWS = 16


def product_rows(rows: int) -> int:
    """The rows a oneDNN product of ``rows`` rows runs on: a multiple of :data:`MIN_ROWS`, or the
    next multiple of :data:`ROW_BUCKET` where that adds at most 1/16 (one product instead of a
    tail product and a copy that joins the two outputs; same bits either way).

    >>> [product_rows(rows) for rows in (1, 25, 130, 300, 1990)]
    [16, 32, 144, 304, 2048]
    """
    rows16 = -(-rows // MIN_ROWS) * MIN_ROWS
    bucket = -(-rows // ROW_BUCKET) * ROW_BUCKET
    return bucket if rows16 > ROW_BUCKET and bucket - rows16 <= rows16 // 16 else rows16


def split_point(rows: int) -> int:
    """Where a product of ``rows`` rows (a :func:`product_rows` count) is cut: its head, a multiple
    of :data:`ROW_BUCKET` rows (0 or ``rows``: one product), then a tail of fewer rows.

    >>> split_point(304), split_point(96), split_point(2048)
    (256, 0, 2048)
    """
    return rows // ROW_BUCKET * ROW_BUCKET


def segments(rows: int) -> list:
    """The ``(start, stop)`` row ranges a oneDNN product of ``rows`` rows (a :func:`product_rows`
    count) runs as: the head and the tail of :func:`split_point`, or one range.

    >>> segments(304), segments(96), segments(2048)
    ([(0, 256), (256, 304)], [(0, 96)], [(0, 2048)])
    """
    head = split_point(rows)
    return [(0, head), (head, rows)] if 0 < head < rows else [(0, rows)]
