"""``--context K`` with ``--doc-ids FILE`` or a table's document-id column, for ``nlgscore score``.

Each line is read after the previous ``K`` lines of its document (:mod:`nlgscore.core.context`).
A document must not be split between two compute calls, so a run with context scores the corpus
in one call (it is held in memory), and resumable ``-o`` runs, which score window by window, do
not take it.
"""

from __future__ import annotations

import argparse
from typing import Any, List, Optional

from nlgscore.cli.options import fail, read_lines
from nlgscore.core.scorer_like import ScorerLike

DOC_ID_COLUMN = "doc_id"


def add_context_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("document context (BERTScore, Prism, BARTScore)")
    group.add_argument(
        "--context",
        type=int,
        default=0,
        metavar="K",
        help="read each line after the previous K lines of its document (default 0: sentence level)",
    )
    group.add_argument(
        "--doc-ids",
        default=None,
        metavar="FILE",
        help="one document id a line, for the lines of -c; "
        f"with -i, the table's column {DOC_ID_COLUMN!r} (or --doc-id-column) is used",
    )
    group.add_argument(
        "--doc-id-column",
        default=None,
        metavar="NAME",
        help=f"column of -i holding the document id (default: {DOC_ID_COLUMN})",
    )


def doc_ids(args: argparse.Namespace) -> Optional[List[str]]:
    """The document ids the command line names (None without ``--context``); errors name the flag."""
    if args.context < 0:
        fail(f"--context must be >= 0 (previous lines to read), got {args.context}")
    if not args.context:
        if args.doc_ids or args.doc_id_column:
            fail("--doc-ids/--doc-id-column are used with --context K (K > 0)")
        return None
    if args.output is not None:
        fail(
            "--context scores the corpus in one call (a document must not be split between windows); "
            "-o runs score window by window: print the scores (--seg/--json) instead"
        )
    if args.doc_ids is not None:
        if args.doc_id_column is not None:
            fail("give --doc-ids FILE or --doc-id-column NAME, not both")
        return read_lines(args.doc_ids, "--doc-ids")
    if args.input is None:
        fail(f"--context {args.context} needs --doc-ids FILE (one document id a line)")
    from nlgscore.stream import readers

    column = args.doc_id_column or DOC_ID_COLUMN
    # The column read as a table's text column: errors name the file, the line and the column.
    table = readers.table_file(
        args.input, format=args.input_format, prediction_column=column, reference_column=None, source_column=None
    )
    return [row[0] for row in table.rows()]


def score_in_context(scorer: ScorerLike, inputs: Any, args: argparse.Namespace, ids: List[str]) -> Any:
    """One compute call on the whole corpus with ``--context``."""
    from nlgscore.stream.row_windows import score_chunk

    rows = list(inputs.rows())
    if len(ids) != len(rows):
        fail(f"--doc-ids has {len(ids)} lines but the input has {len(rows)} (one document id a line)")
    return score_chunk(scorer, rows, inputs, context=args.context, doc_ids=ids)
