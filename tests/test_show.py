"""Pictures: nlgscore.bertscore.plot, nlgscore.meta.plot (pair heat map, correlation chart) and the `nlgscore show` command."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from nlgscore.bertscore.plot import pair_matrix, plot_pair
from nlgscore.cli import main
from nlgscore.meta.plot import plot_correlations

CAND, REF = "it is freezing today", "the weather is cold today"
PNG = b"\x89PNG\r\n\x1a\n"


def test_matrix_matches_the_scores(minilm_scorer):
    data = pair_matrix(minilm_scorer, CAND, REF)
    assert data["cand_tokens"] == ["it", "is", "freezing", "today"]
    assert data["ref_tokens"] == ["the", "weather", "is", "cold", "today"]
    result = minilm_scorer.score([CAND], [REF])
    # Greedy matching without idf: P is the mean of each candidate token's best similarity, R the same
    # for reference tokens (here no best match is a special token, so the drawn matrix holds them all).
    assert not any(data["cand_match_special"]) and not any(data["ref_match_special"])
    sim = data["sim"]
    rows = np.arange(sim.shape[0])
    cols = np.arange(sim.shape[1])
    assert np.mean(sim[rows, data["cand_match"]]) == pytest.approx(float(result.precision[0]), abs=1e-5)
    assert np.mean(sim[data["ref_match"], cols]) == pytest.approx(float(result.recall[0]), abs=1e-5)
    assert data["cand_match"] == list(sim.argmax(axis=1)) and data["ref_match"] == list(sim.argmax(axis=0))


def test_plot_pair_writes_png_with_scores_in_title(minilm_scorer, tmp_path):
    path = tmp_path / "pair.png"
    fig = plot_pair(minilm_scorer, CAND, REF, path=str(path))
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 10_000
    f1 = float(minilm_scorer.score([CAND], [REF]).f1[0])
    assert f"F1 {f1:.4f}" in fig.axes[0].get_title()
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["the", "weather", "is", "cold", "today"]  # no idf: no weights on the axes


def test_plot_pair_picks_best_of_several_references(minilm_scorer):
    fig = plot_pair(minilm_scorer, CAND, ["dogs bark loudly", REF])
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()][1] == "weather"


def test_plot_pair_empty_candidate_is_a_clear_error(minilm_scorer):
    with pytest.raises(ValueError, match="empty"), pytest.warns(UserWarning):
        plot_pair(minilm_scorer, "", REF)


def test_cli_show_with_idf(tmp_path, capsys):
    corpus = tmp_path / "refs.txt"
    corpus.write_text(
        "the weather is cold today\nit is sunny\nthe cat is on the mat\ntoday is monday\n", encoding="utf-8"
    )
    out = tmp_path / "figs" / "pair.png"
    status = main(
        [
            "show",
            "--cand",
            CAND,
            "--ref",
            REF,
            "--model",
            "minilm",
            "-l",
            "4",
            "--idf",
            "--idf-sents",
            str(corpus),
            "-o",
            str(out),
        ]
    )
    assert status == 0 and out.read_bytes()[:8] == PNG
    assert capsys.readouterr().out.strip() == f"wrote {out}"  # says where the picture is


def test_cli_show_idf_without_corpus_fails_clearly(tmp_path, capsys):
    assert (
        main(["show", "--cand", CAND, "--ref", REF, "--model", "minilm", "--idf", "-o", str(tmp_path / "x.png")]) == 2
    )
    assert "--idf needs --idf-sents" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_plot_correlations_from_meta_json(tmp_path):
    rows = [
        {"dataset": "kk-en", "metric": m, "level": "segment", "measure": "tau", "value": v, "ci_low": lo, "ci_high": hi}
        for m, v, lo, hi in [
            ("bertscore", 0.351, 0.33, 0.37),
            ("chrf", 0.323, None, None),
            ("prism", 0.362, 0.34, 0.38),
        ]
    ] + [
        {
            "dataset": "summeval",
            "metric": "bertscore",
            "level": "summary",
            "measure": "spearman",
            "value": -0.1,
            "ci_low": -0.2,
            "ci_high": 0.05,
        }
    ]
    source = tmp_path / "meta.json"
    source.write_text(json.dumps({"results": rows}), encoding="utf-8")
    path = tmp_path / "corr.png"
    fig = plot_correlations(source, str(path), title="test")
    assert path.read_bytes()[:8] == PNG
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["kk-en · segment · tau", "summeval · summary · spearman"]
    assert [t.get_text() for t in visible[0].get_yticklabels()] == ["chrf", "bertscore", "prism"]  # sorted by value
    with pytest.raises(ValueError, match="lacks"):
        plot_correlations([{"dataset": "x", "value": 1.0}])
    with pytest.raises(ValueError, match="no meta-evaluation rows"):
        plot_correlations({"results": []})


def test_matplotlib_is_imported_lazily():
    code = "import sys, nlgscore.bertscore.plot, nlgscore.meta.plot, nlgscore.cli.show; assert 'matplotlib' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_cli_show_reads_files_like_every_command(tmp_path, capsys):
    cands, refs = tmp_path / "c.txt", tmp_path / "r.txt"
    cands.write_text(f"first\n{CAND}\n", encoding="utf-8")
    refs.write_text(f"first\n{REF}\n", encoding="utf-8")
    out = tmp_path / "pair.png"
    assert main(["show", "-c", str(cands), "-r", str(refs), "--line", "2", "--model", "minilm", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG and capsys.readouterr().out.strip() == f"wrote {out}"
    assert main(["show", "-c", CAND, "--ref", REF, "--model", "minilm", "-o", str(out)]) == 2
    assert "use --cand TEXT" in capsys.readouterr().err
