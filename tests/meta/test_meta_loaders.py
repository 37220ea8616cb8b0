"""Loaders on tiny hand-made files (the real data files are never copied into the repo)."""

import json
from pathlib import Path

import numpy as np
import pytest

from nlgscore.meta.data.loaders import (
    data_file,
    default_data_dir,
    load_darr,
    load_summeval,
)
from nlgscore.meta.data.wmt21 import load_wmt21, wmt21_system_name

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _pair(i, better="good", worse="bad"):
    return {
        "id": i,
        "lp": "xx-en",
        "src": f"s{i}",
        "ref": f"r{i}",
        "better": {"system": "A.1", "text": better},
        "worse": {"system": "B.2", "text": worse},
    }


def test_load_darr_columns_and_head(tmp_path):
    data = load_darr(_write_jsonl(tmp_path / "wmt-xx-en.jsonl", [_pair(0), _pair(1, "g2", "b2")]))
    assert (data.lp, len(data), data.better, data.worse_system) == ("xx-en", 2, ["good", "g2"], ["B.2", "B.2"])
    assert data.head(1).ref == ["r0"] and len(data.head(None)) == 2
    assert data.ids == ["0", "1"] and data.head(1).ids == ["0"]


def test_load_darr_missing_field_names_file_and_line(tmp_path):
    broken = _pair(1)
    del broken["worse"]["text"]
    path = _write_jsonl(tmp_path / "wmt-xx-en.jsonl", [_pair(0), broken])
    with pytest.raises(ValueError, match=r"wmt-xx-en\.jsonl:2 \(worse\): missing field 'text'"):
        load_darr(path)


def test_load_summeval_matrix(tmp_path):
    def doc(i, a, b):
        return {
            "id": f"d{i}",
            "src": "S",
            "refs": ["R1", "R2"],
            "systems": {
                "M1": {"text": f"x{i}", "scores": {"coherence": a, "fluency": 1}},
                "M0": {"text": f"y{i}", "scores": {"coherence": b, "fluency": 2}},
            },
        }

    data = load_summeval(_write_jsonl(tmp_path / "s.jsonl", [doc(0, 3, 4), doc(1, 5, 1)]))
    assert data.systems == ["M0", "M1"]  # sorted, so columns are stable
    assert data.texts[1] == ["y1", "x1"]
    assert data.human["coherence"].tolist() == [[4, 3], [1, 5]]
    bad = doc(2, 1, 1)
    del bad["systems"]["M0"]["scores"]
    _write_jsonl(tmp_path / "bad.jsonl", [doc(0, 3, 4), bad])
    with pytest.raises(ValueError, match=r"bad\.jsonl:2 \(system M0\): missing field 'scores'"):
        load_summeval(tmp_path / "bad.jsonl")


def _wmt21_folder(tmp_path, seg_lines, systems=("UF", "NVIDIA-NeMo")):
    (tmp_path / "src.de").write_text("q1\nq2\nq3\n", encoding="utf-8")
    (tmp_path / "ref.A.en").write_text("r1\nr2\nr3\n", encoding="utf-8")
    (tmp_path / "ref.B.en").write_text("h1\nh2\nh3\n", encoding="utf-8")
    for name in systems:
        (tmp_path / f"hyp.{name}.en").write_text(f"{name}1\n{name}2\n{name}3\n", encoding="utf-8")
    (tmp_path / "da-seg-scores.csv").write_text("SYS SID RAW.SCR Z.SCR N \n" + seg_lines, encoding="utf-8")
    (tmp_path / "da-sys-scores.csv").write_text(
        "RAW.SCR Z.SCR N SYS N.ALL\n70 0.1 2 UF.15 2\n60 -0.2 2 Nemo.7 2\n", encoding="utf-8"
    )
    return tmp_path


def test_load_wmt21_maps_names_and_sids(tmp_path):
    folder = _wmt21_folder(tmp_path, "UF.15 1 90 0.5 1 \nUF.15 3 40 -0.5 2 \nNemo.7 2 55 0.0 1 \nHUMAN.0 1 99 1.2 1 \n")
    data = load_wmt21(folder)
    assert data.lp == "de-en"  # from src.de
    assert sorted(data.hyps) == ["HUMAN", "NVIDIA-NeMo", "UF"]  # named as in the hyp files
    assert data.hyps["NVIDIA-NeMo"] == ["NVIDIA-NeMo1", "NVIDIA-NeMo2", "NVIDIA-NeMo3"]
    assert data.hyps["HUMAN"] == ["h1", "h2", "h3"]
    np.testing.assert_array_equal(data.seg_raw["UF"], [90, np.nan, 40])  # SID is 1-based
    assert data.seg_z["NVIDIA-NeMo"][1] == 0.0 and data.sys_z == {"UF": 0.1, "NVIDIA-NeMo": -0.2}


def test_load_wmt21_without_ref_b_leaves_human_out(tmp_path):
    folder = _wmt21_folder(tmp_path, "UF.15 1 90 0.5 1 \nNemo.7 2 55 0.0 1 \nHUMAN.0 1 99 1.2 1 \n")
    (folder / "ref.B.en").unlink()
    assert sorted(load_wmt21(folder).hyps) == ["NVIDIA-NeMo", "UF"]


def test_load_wmt21_unmapped_system_is_an_error(tmp_path):
    folder = _wmt21_folder(tmp_path, "UF.15 1 90 0.5 1 \nMystery.3 1 10 0.1 1 \n")
    with pytest.raises(ValueError, match=r"da-seg-scores\.csv:3: DA system 'Mystery\.3' has no output file"):
        load_wmt21(folder)


def test_load_wmt21_bad_rows(tmp_path):
    with pytest.raises(ValueError, match=r"SID 4 outside 1\.\.3"):
        load_wmt21(_wmt21_folder(tmp_path, "UF.15 4 90 0.5 1 \n"))
    with pytest.raises(ValueError, match=r"da-seg-scores\.csv:2: expected 5 fields"):
        load_wmt21(_wmt21_folder(tmp_path, "UF.15 1 90\n"))
    assert wmt21_system_name("Online-W.3") == ("Online-W", "hyp.Online-W")
    assert wmt21_system_name("VolcTrans-GLAT.44") == ("VolcTrans-GLAT", "hyp.VolcTrans-GLAT")


def test_default_data_dir_order(monkeypatch, tmp_path):
    monkeypatch.setenv("NLGSCORE_DATA", str(tmp_path))
    assert default_data_dir() == tmp_path
    monkeypatch.delenv("NLGSCORE_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "xdg" / "nlgscore"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_data_dir() == tmp_path / "home" / ".cache" / "nlgscore" / "data"
    import nlgscore

    assert Path(nlgscore.__file__).parent not in default_data_dir().parents  # never inside the package


def test_missing_data_set_says_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("NLGSCORE_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"'wmt-kk-en\.jsonl' not found: looked in .* \(\$NLGSCORE_DATA\)"):
        data_file("wmt-kk-en.jsonl")
    with pytest.raises(FileNotFoundError, match="the folder given"):
        data_file("sum-summeval.jsonl", tmp_path / "elsewhere")


def test_real_wmt21_folder_reads_all_systems():
    folder = SHARED / "wmt21-de-en"
    if not folder.is_dir():
        pytest.skip(f"WMT21 data not found at {folder} (../shared/data next to the repository)")
    data = load_wmt21(folder)
    assert len(data.hyps) == 20 and "NVIDIA-NeMo" in data.hyps and len(data.src) == 1000
    assert sum(int(np.sum(~np.isnan(v))) for v in data.seg_raw.values()) == 19385
    # the official system score is the mean of the segment scores
    assert np.nanmean(data.seg_raw["UF"]) == pytest.approx(data.sys_raw["UF"])
