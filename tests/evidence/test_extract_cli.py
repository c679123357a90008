"""`ci-stability logs extract`: output formats, stdin, exit codes, no tracebacks."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.logs import main

LOGS = Path(__file__).resolve().parent.parent / "data" / "ci-logs"
ROOT = Path(__file__).resolve().parent.parent.parent
OOM_LOG = LOGS / "pytorch-gha-cuda-oom-fp64-cast.log"
KEYS = {"category", "line_no", "line", "signature", "surface", "context"}


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(LOGS / "pytorch-gha-importerror-missing-so.log")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("root cause: import-error at line 31\n")
    assert "surface:    line 32: ##[error]Process completed with exit code 1." in out
    assert "> 31 | ImportError: librocm_smi64.so.1: cannot open shared object file" in out
    assert "  30 | " in out and "  34 | " in out


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(OOM_LOG), "--format", "json", "--context", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data.keys() >= KEYS
    assert (data["category"], data["line_no"]) == ("cuda-oom", 21)
    assert data["surface"] is None
    assert [c["line_no"] for c in data["context"]] == [20, 22]
    assert data["signature"].startswith("cuda-oom: ")


def test_surface_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    log = LOGS / "pytorch-gha-test-file-sigbus.log"
    assert main(["extract", str(log), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    exit_line = "##[error]Process completed with exit code 1."
    assert data["surface"] == {"line_no": 65, "line": exit_line}


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(OOM_LOG.read_bytes()))
    assert main(["extract", "-", "--format", "json", "--context", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["line_no"] == 21 and data["context"] == []


def test_a_wrapper_alone_is_reported_with_a_note(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = b"all good\n##[error]Process completed with exit code 1.\n"
    monkeypatch.setattr(sys, "stdin", _Stdin(log))
    assert main(["extract", "-", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data.keys() >= KEYS | {"chain", "attempts", "note"}
    assert (data["category"], data["line_no"], data["pattern"]) == ("other", 2, "exit-code")
    assert "not in this log" in data["note"]


def test_no_root_cause_is_a_successful_analysis(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(b"all good\nstill fine\n"))
    assert main(["extract", "-", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data.keys() >= KEYS
    assert data["category"] is None and data["line_no"] is None
    assert data["reason"].startswith("no root cause found: no line matched")

    monkeypatch.setattr(sys, "stdin", _Stdin(b"\x00\xff" * 1000))
    assert main(["extract", "-"]) == 0
    assert capsys.readouterr().out.startswith("no root cause found: the input looks binary")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "missing command"),
        (["extract"], "the following arguments are required: FILE"),
        (["extract", "x.log", "--format", "xml"], "invalid choice"),
        (["extract", "x.log", "--context", "-1"], "--context must be between"),
        (["extract", "x.log", "--context", "many"], "invalid int value"),
        (["bogus"], "invalid choice"),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("target", ["missing.log", "."])
def test_unreadable_input(target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path if target == "." else tmp_path / target
    assert main(["extract", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ci-stability logs extract: cannot read ") and "Traceback" not in err


def test_runs_as_a_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli.logs", "extract", str(OOM_LOG), "--format", "json"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["category"] == "cuda-oom"
