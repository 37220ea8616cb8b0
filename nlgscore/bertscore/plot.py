"""The token-similarity heat map of one BERTScore pair.

matplotlib is imported only when a picture is drawn (``pip install 'nlgscore[plot]'``), and
always with the file-only Agg backend unless a backend is already active (notebooks).

>>> from nlgscore.bertscore import BERTScorer
>>> fig = plot_pair(BERTScorer(model_type="minilm", num_layers=4), "it is freezing today", "the weather is cold today")
>>> fig.axes[0].get_title().splitlines()[0]
'P 0.7776  R 0.7224  F1 0.7490'
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.backend.extras import pyplot as _pyplot
from nlgscore.errors import ArgumentError, ArgumentTypeError

MAX_ANNOTATED = 30  # tokens per side up to which each cell shows its value
# ``scorer`` below is a BERTScorer, typed Any: the scorer's module imports this one (Result.plot)


def pair_matrix(scorer: Any, cand: str, ref: str) -> Dict[str, Any]:
    """What the heat map shows, without drawing: tokens, similarities, weights and greedy matches.

    Special tokens (CLS/SEP, ``<s>``/``</s>``) are dropped from the display but kept for the
    matching, as BERTScore keeps them: ``*_match_special[i]`` is True where a token's best match
    is a special token. With baseline rescaling the similarities are rescaled with the F1
    baseline, as bert_score's heat map does.
    """
    cand_tokens, ref_tokens, sim, cand_w, ref_w = scorer.similarity(cand, ref)
    sim = np.asarray(sim, dtype=np.float64)
    enc = scorer.encoder
    lo, hi = len(enc.prefix), len(enc.suffix)
    rows = slice(lo, sim.shape[0] - hi)
    cols = slice(lo, sim.shape[1] - hi)
    best_ref = sim.argmax(axis=1)  # precision direction: each candidate token's match
    best_cand = sim.argmax(axis=0)  # recall direction: each reference token's match
    baseline = getattr(scorer, "baseline", None)
    if baseline is not None:
        base = np.asarray(baseline, dtype=np.float64)
        f_base = float(base[..., 2] if base.ndim == 1 else base[scorer.num_layers, 2])
        sim = (sim - f_base) / (1.0 - f_base)
    inside = lambda k, s: s.start <= k < s.stop  # noqa: E731
    return {
        "cand_tokens": [t.strip() or repr(t) for t in cand_tokens[rows]],
        "ref_tokens": [t.strip() or repr(t) for t in ref_tokens[cols]],
        "sim": sim[rows, cols],
        "cand_weights": np.asarray(cand_w, dtype=np.float64)[rows],
        "ref_weights": np.asarray(ref_w, dtype=np.float64)[cols],
        "cand_match": [int(k) - lo for k in best_ref[rows]],
        "ref_match": [int(k) - lo for k in best_cand[cols]],
        "cand_match_special": [not inside(int(k), cols) for k in best_ref[rows]],
        "ref_match_special": [not inside(int(k), rows) for k in best_cand[cols]],
        "rescaled": baseline is not None,
    }


def _best_reference(scorer: Any, cand: str, refs: Sequence[str]) -> Tuple[str, Any]:
    result = scorer.score([cand], [list(refs)] if len(refs) > 1 else [refs[0]])
    if len(refs) == 1:
        return refs[0], result
    f1 = [scorer.score([cand], [r]).scores[0] for r in refs]  # the chosen layer, also with all_layers
    return refs[int(np.argmax(f1))], result


def _label(token: str, weight: float, special: bool, show_weight: bool) -> str:
    text = token + ("*" if special else "")
    return f"{text}  {weight:.2f}" if show_weight else text


def plot_pair(scorer: Any, cand: str, ref: Union[str, Sequence[str]], path: Optional[str] = None):
    """Heat map of the token similarities of one pair (the BERTScore paper's Figure 1).

    Rows are candidate tokens, columns reference tokens; a circle marks each candidate token's
    greedy match (precision), a square each reference token's (recall). With idf the weights
    are written next to the tokens. ``ref`` may be a list of references: the best one (highest
    F1) is drawn. Returns the matplotlib Figure; with ``path`` it is also saved (PNG, PDF, SVG…).
    """
    refs = [ref] if isinstance(ref, str) else list(ref)
    if not refs or not all(isinstance(r, str) for r in refs):
        raise ArgumentTypeError("ref must be a string or a non-empty list of strings")
    ref, result = _best_reference(scorer, cand, refs)
    data = pair_matrix(scorer, cand, ref)
    sim = data["sim"]
    if sim.size == 0:
        raise ArgumentError("nothing to draw: the candidate or the reference is empty")
    plt = _pyplot()
    n_rows, n_cols = sim.shape
    show_w = bool(getattr(scorer, "idf", False))
    fig, ax = plt.subplots(figsize=(min(2.5 + 0.55 * n_cols, 40), min(2.0 + 0.42 * n_rows, 40)))
    image = ax.imshow(
        sim, cmap="Blues", vmin=min(0.0, float(sim.min())), vmax=max(1.0, float(sim.max())), aspect="auto"
    )
    fig.colorbar(
        image,
        ax=ax,
        fraction=0.046,
        pad=0.03,
        label="rescaled cosine similarity" if data["rescaled"] else "cosine similarity",
    )
    ax.set_xticks(range(n_cols))
    ax.set_xticklabels(
        [
            _label(t, w, s, show_w)
            for t, w, s in zip(data["ref_tokens"], data["ref_weights"], data["ref_match_special"])
        ],
        rotation=60,
        ha="right",
        rotation_mode="anchor",
    )
    ax.set_yticks(range(n_rows))
    ax.set_yticklabels(
        [
            _label(t, w, s, show_w)
            for t, w, s in zip(data["cand_tokens"], data["cand_weights"], data["cand_match_special"])
        ]
    )
    ax.set_xlabel("reference tokens" + ("  (idf weight)" if show_w else ""))
    ax.set_ylabel("candidate tokens" + ("  (idf weight)" if show_w else ""))
    if max(n_rows, n_cols) <= MAX_ANNOTATED:
        for i in range(n_rows):
            for j in range(n_cols):
                ax.text(
                    j,
                    i,
                    f"{sim[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if sim[i, j] > 0.6 else "black",
                )
    for i, (j, special) in enumerate(zip(data["cand_match"], data["cand_match_special"])):
        if not special:
            ax.plot(
                j, i, marker="o", markersize=18, markerfacecolor="none", markeredgecolor="#d62728", markeredgewidth=1.6
            )
    for j, (i, special) in enumerate(zip(data["ref_match"], data["ref_match_special"])):
        if not special:
            ax.plot(
                j,
                i,
                marker="s",
                markersize=22,
                markerfacecolor="none",
                markeredgecolor="#ff7f0e",
                markeredgewidth=1.4,
                linestyle="none",
            )
    ax.set_xlim(-0.5, n_cols - 0.5)
    ax.set_ylim(n_rows - 0.5, -0.5)
    p, r, f = (float(result.chosen(name)[0]) for name in ("precision", "recall", "f1"))
    scores = f"P {p:.4f}  R {r:.4f}  F1 {f:.4f}"
    note = "○ best match of a candidate token (precision)   □ of a reference token (recall)"
    if any(data["cand_match_special"]) or any(data["ref_match_special"]):
        note += "\n* best match is a special token (not drawn)"
    ax.set_title(f"{scores}\n{scorer.model_type}, layer {scorer.num_layers}", fontsize=10)
    fig.text(0.01, 0.005, note, fontsize=8, va="bottom", ha="left")
    fig.tight_layout(rect=(0, 0.06 if "\n" in note else 0.04, 1, 1))
    if path is not None:
        fig.savefig(path, dpi=130, bbox_inches="tight")
        plt.close(fig)
    return fig
