"""CLI defects, each with a regression test on the real commands and tiny models: a BOM in
input files, --json null for empty input, `show -o <folder>`, user errors as one line with exit
2 / 130, lone surrogates in `show --cand`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nlgscore.cli import main

GOLDEN = Path(__file__).parents[1] / "golden"
TINY_BART, TINY_PRISM = GOLDEN / "tiny-bart", GOLDEN / "tiny-prism"
REPO = Path(__file__).resolve().parents[2]
P = ["The cat sat on the mat.", "Prices rose sharply."]
R = ["A cat was sitting on the mat.", "Prices increased steeply."]


def write(path: Path, lines, bom: bool = False) -> Path:
    text = "".join(line + "\n" for line in lines)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


@pytest.fixture()
def files(tmp_path):
    return {
        "c": write(tmp_path / "c.txt", P),
        "r": write(tmp_path / "r.txt", R),
        "empty": write(tmp_path / "e.txt", []),
    }


def one_line_error(capsys, code, want_code=2):
    err = capsys.readouterr().err
    assert code == want_code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_bom_does_not_change_scores(files, tmp_path, capsys):
    bom_c = write(tmp_path / "bom_c.txt", P, bom=True)
    bom_r = write(tmp_path / "bom_r.txt", R, bom=True)
    outs = []
    for c, r in ((files["c"], files["r"]), (bom_c, bom_r)):
        assert (
            main(["bartscore", "--checkpoint", str(TINY_BART), "-c", str(c), "-r", str(r), "--json", "--no-progress"])
            == 0
        )
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["scores"] == outs[1]["scores"]


@pytest.mark.parametrize(
    "argv",
    [
        ["bertscore", "--model", "minilm"],
        ["prism", "--checkpoint", str(TINY_PRISM)],
        ["bartscore", "--checkpoint", str(TINY_BART)],
    ],
)
def test_empty_input_is_an_error_naming_the_file_never_nan(files, capsys, argv):
    """An empty corpus is an error: it has no score (it printed NaN/null, exit 0)."""
    code = main([*argv, "-c", str(files["empty"]), "-r", str(files["empty"]), "--json", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert f"{files['empty']} is empty: there is nothing to score" in captured.err and "NaN" not in captured.err


def test_show_into_an_existing_folder_is_an_error(tmp_path, capsys):
    code = main(["show", "--cand", "a cat", "--ref", "the cat", "--model", "minilm", "-o", str(tmp_path)])
    assert "is a folder" in one_line_error(capsys, code)
    assert not Path(str(tmp_path) + ".png").exists()


def test_lone_surrogate_is_named(tmp_path, capsys):
    code = main(
        ["show", "--cand", "a \ud800 cat", "--ref", "the cat", "--model", "minilm", "-o", str(tmp_path / "x.png")]
    )
    err = one_line_error(capsys, code)
    assert "--cand" in err and "character 2" in err and "surrogate" in err


def test_cuda_without_cuda(files, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    code = main(["bertscore", "--model", "minilm", "-c", str(files["c"]), "-r", str(files["r"]), "--device", "cuda"])
    assert "--device cuda: CUDA is not available" in one_line_error(capsys, code)


def broken_copy(tmp_path, source: Path, name: str, edit) -> Path:
    folder = tmp_path / name
    shutil.copytree(source, folder)
    edit(folder)
    return folder


def _truncate(folder: Path) -> None:
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])


def _wrong_type(folder: Path) -> None:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["d_model"] = "wide"
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")


def _corrupt_spm(folder: Path) -> None:
    (folder / "sentencepiece.bpe.model").write_bytes(b"not a sentencepiece model")


@pytest.mark.parametrize(
    "command, source, edit, cause",
    [
        ("bartscore", TINY_BART, _truncate, "SafetensorError"),
        ("bartscore", TINY_BART, _wrong_type, "d_model"),
        ("prism", TINY_PRISM, _corrupt_spm, "ModelProto"),
    ],
)
def test_broken_checkpoints_are_one_line(files, tmp_path, capsys, command, source, edit, cause):
    folder = broken_copy(tmp_path, source, "model", edit)
    argv = [command, "--checkpoint", str(folder), "-c", str(files["c"]), "-r", str(files["r"]), "--no-progress"]
    err = one_line_error(capsys, main(argv))
    assert f"--checkpoint {folder}" in err and cause in err
    try:  # --debug shows the real error, with its traceback, instead of the one line
        main([*argv, "--debug"])
    except Exception as real:
        chain = []
        while real is not None:
            chain.append(f"{type(real).__name__}: {real}")
            real = real.__cause__ or real.__context__
        assert any(cause in link for link in chain), chain
    else:
        pytest.fail("--debug returned instead of raising the loader's error")


def test_refused_para_weights(files, tmp_path, capsys):
    import torch

    class Payload:
        def __reduce__(self):
            return (os.getcwd, ())

    weights = tmp_path / "bart.pth"
    torch.save({"x": Payload()}, weights)
    code = main(
        [
            "bartscore",
            "--checkpoint",
            str(TINY_BART),
            "--variant",
            "bart-large-cnn-para",
            "--para-weights",
            str(weights),
            "-c",
            str(files["c"]),
            "-r",
            str(files["r"]),
            "--no-progress",
        ]
    )
    err = one_line_error(capsys, code)
    assert f"--para-weights {weights}" in err and "weights_only=False" not in err


def test_not_utf8_input_names_the_file(tmp_path, capsys):
    utf16 = tmp_path / "u16.txt"
    utf16.write_text("hello\n", encoding="utf-16")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café\n".encode("latin-1"))
    for path, cause in ((utf16, "UTF-16"), (latin, "not UTF-8: byte 3")):
        code = main(["bertscore", "--model", "minilm", "-c", str(path), "-r", str(path)])
        err = one_line_error(capsys, code)
        assert str(path) in err and cause in err


def _blocked_reading_stdin(pid: int) -> bool:
    """The process's main thread sits in read(0, ...) (Linux /proc; syscall 0 is read on x86-64)."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().split()[:2] == ["0", "0x0"]
    except OSError:
        return False


def test_ctrl_c_exits_130_without_traceback(files):
    # A real SIGINT to a real process blocked on reading stdin (nothing is mocked). The child gets
    # the default SIGINT disposition, as a terminal's foreground job has: an ignored SIGINT is
    # inherited across exec, and `make test &` in a non-interactive shell starts with it ignored.
    proc = subprocess.Popen(
        [sys.executable, "-m", "nlgscore", "bertscore", "--model", "minilm", "-c", "-", "-r", str(files["r"])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    if Path(f"/proc/{proc.pid}/syscall").exists():
        while not _blocked_reading_stdin(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
    else:  # no /proc: give it the time to import and reach the read
        time.sleep(5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Traceback" not in err and b"interrupted" in err, (proc.returncode, err[-2000:])
