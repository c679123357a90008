"""Colour and progress on a real (pseudo-)terminal; plain text everywhere else."""

from __future__ import annotations

import io
import os
import re
import select
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TextIO

import pytest

from bot.cli.runs import main as runs_main
from bot.cli.terminal import StatusLine, write_segments
from bot.core.findings import Finding, Severity
from bot.core.report import Report
from bot.render import text
from tests.evidence.factories import NOW, ci_log
from tests.fakegithub import running_fake_github

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLOUR = re.compile(r"\x1b\[[0-9;]*(3[0-7]|9[0-7])[0-9;]*m")
REPORT = Report((Finding("silenced-test", Severity.ERROR, "job may fail", "ci.yml", 3,
                         suggestion="continue-on-error: false"),
                 Finding("dedup-note", Severity.NOTICE, "say what you searched")),
                files_total=1, files_in_scope=1)


@contextmanager
def terminal() -> Iterator[tuple[TextIO, int]]:
    master, slave = os.openpty()
    stream = os.fdopen(slave, "w", encoding="utf-8")
    try:
        yield stream, master
    finally:
        stream.close()
        os.close(master)


def drain(master: int) -> str:
    chunks = []
    while select.select([master], [], [], 0.3)[0]:
        data = os.read(master, 65536)
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.fixture(autouse=True)
def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def test_text_is_coloured_on_a_terminal_and_says_the_same_thing() -> None:
    with terminal() as (stream, master):
        write_segments(text.segments(REPORT), stream)
        stream.flush()
        shown = drain(master)
    assert COLOUR.search(shown)
    assert ANSI.sub("", shown) == text.render(REPORT)


def test_no_color_ci_and_pipes_get_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    with terminal() as (stream, master):
        write_segments(text.segments(REPORT), stream)
        stream.flush()
        shown = drain(master)
    assert not COLOUR.search(shown) and ANSI.sub("", shown) == text.render(REPORT)
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("CI", "true")
    with terminal() as (stream, master):
        write_segments(text.segments(REPORT), stream)
        stream.flush()
        assert drain(master) == text.render(REPORT)
    monkeypatch.delenv("CI")
    piped = io.StringIO()
    write_segments(text.segments(REPORT), piped)
    assert piped.getvalue() == text.render(REPORT)


def test_status_line_only_on_an_interactive_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    with terminal() as (stream, master):
        with StatusLine(stream) as status:
            status("o/r: 1 runs")
            status("o/r: 2 runs")
        shown = drain(master)
    assert "o/r: 2 runs" in ANSI.sub("", shown)
    monkeypatch.setenv("CI", "1")
    with terminal() as (stream, master):
        with StatusLine(stream) as status:
            status("o/r: 1 runs")
        assert drain(master) == ""


def test_runs_backfill_shows_its_progress_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running_fake_github() as fake, terminal() as (stream, master):
        fake.add_personal_token("ghp_cli", "indexer")
        run = fake.add_workflow_run("o/r", head_sha="1" * 40, created_at=NOW - timedelta(hours=1))
        fake.add_job(run.id, name="lint", log=ci_log("pytorch-gha-cxx-compile-error.log").decode(),
                     started_at=NOW, completed_at=NOW)
        monkeypatch.setenv("GITHUB_TOKEN", "ghp_cli")
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setattr(sys, "stderr", stream)
        code = runs_main(["backfill", "--db", str(tmp_path / "ci.db"), "--github", "o/r",
                          "--days", "2"], now=NOW)
        stream.flush()
        shown = ANSI.sub("", drain(master))
    assert code == 0
    assert "o/r: 1 runs (0 already indexed), 1 jobs, 1 failures, 1 logs analysed" in shown
