"""``nlgscore score SPEC``: any metric of the registry table by its spec string.

    nlgscore score bertscore:minilm:L4 -c examples/cands.txt -r examples/refs.txt --json
    nlgscore score prism:src:tests/golden/tiny-prism -c cands.txt -s srcs.txt

Prints ``<signature> <primary column>: <system value>``; ``--seg`` first prints every line's
columns, ``--json`` one JSON object. A metric added with ``nlgscore.registry.register`` is
available here without any other change.
"""

from __future__ import annotations

import argparse
import inspect

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import (
    add_input_options, add_output_options, add_runtime_options, check_device, fail, load_scorer, read_inputs,
    runtime_settings,
)


def register(subparsers) -> None:
    from nlgscore.registry import metric_names  # the table only: no metric is imported

    parser = subparsers.add_parser(
        "score", help=COMMANDS["score"],
        description="Score each candidate line with the metric named by SPEC (see nlgscore.registry: "
        "bertscore[:MODEL[:L<layer>]], prism:ref|src[:CHECKPOINT], bartscore[:VARIANT_OR_CHECKPOINT[:DIRECTION]], "
        f"or any metric registered by a plug-in). Registered now: {', '.join(metric_names())}.",
    )
    parser.add_argument("spec", metavar="SPEC", help="metric spec, e.g. bertscore:minilm:L4 or prism:ref:tests/golden/tiny-prism")
    add_input_options(parser)
    add_output_options(parser)
    add_runtime_options(parser, dtype=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore import registry
    from nlgscore.cli.output import print_result

    name, _ = registry.parse_spec(args.spec)
    cands, refs, srcs = read_inputs(args)
    if refs is None and srcs is None:
        fail("give references (-r) or sources (-s)")
    check_device(args.device)
    options = runtime_settings(args)
    progress = options.pop("progress")  # passed only to a scorer that takes it

    def build():
        cls = registry.metric(name).scorer_class()
        accepted = inspect.signature(cls).parameters
        unknown = [key for key in options if key not in accepted]
        if unknown:
            fail(f"metric {name!r} has no option {', '.join('--' + k.replace('_', '-') for k in unknown)}")
        if "progress" in accepted:
            options["progress"] = progress
        return registry.load(args.spec, **options)

    scorer = load_scorer(build, {"SPEC": args.spec})
    result = scorer.compute(cands, references=refs, sources=srcs)
    print_result(result, args)
    return 0
