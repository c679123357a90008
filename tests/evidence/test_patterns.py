"""The pattern catalog: well-formed, self-consistent, and the prefilter never misses."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from bot.evidence.logstrip import strip_markers
from bot.evidence.patterns import (
    CatalogError,
    Pattern,
    grep_patterns,
    load_catalog,
    parse_catalog,
    split_alternatives,
    to_grep_ere,
)

LOGS = Path(__file__).resolve().parent.parent / "data" / "ci-logs"
CATALOG = load_catalog()


def _raw_catalog() -> dict[str, Any]:
    text = resources.files("bot.evidence").joinpath("patterns.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _prefilter_hits(line: str) -> bool:
    lowered = line.lower().encode("utf-8", errors="replace")
    return any(rx.search(lowered) for rx in CATALOG.prefilter())


def _examples() -> list[tuple[Pattern, str]]:
    return [(p, example) for p in CATALOG.patterns for example in p.examples]


def test_catalog_is_packaged_and_uses_the_fifteen_categories() -> None:
    assert len(CATALOG.categories) == 15
    assert {p.category for p in CATALOG.patterns} == set(CATALOG.categories)
    assert CATALOG.min_cause_rank > 0


@pytest.mark.parametrize(("pattern", "example"), _examples(), ids=lambda v: getattr(v, "id", ""))
def test_every_example_is_classified_by_its_own_pattern(pattern: Pattern, example: str) -> None:
    match = CATALOG.classify(strip_markers(example))
    assert match is not None and match.pattern.id == pattern.id
    assert _prefilter_hits(example)


def test_the_prefilter_finds_every_line_the_catalog_recognises() -> None:
    recognised = 0
    for log in sorted(LOGS.glob("*.log")):
        for raw in log.read_bytes().split(b"\n"):
            text = strip_markers(raw.decode("utf-8", errors="replace"))
            if CATALOG.classify(text) is not None:
                recognised += 1
                assert any(rx.search(raw.lower()) for rx in CATALOG.prefilter()), text
    assert recognised > 100


def test_gated_literals_skip_identifier_contexts() -> None:
    for benign in ("test_error_messages PASSED", "-Werror=return-type", "0 errors, 0 failures",
                   "test_exceptions.py::T::t PASSED", "x.py::t XFAIL", "24 xfailed"):
        assert not _prefilter_hits(benign), benign
        assert CATALOG.classify(benign) is None
    assert _prefilter_hits("TypeError: x") and _prefilter_hits("error: x")


def test_prefilter_literals_start_with_few_characters() -> None:
    # One regex per first character; each more costs a pass over the log (see catalog).
    assert len(CATALOG.prefilter()) <= 6


def test_echoed_raise_statements_are_ignored() -> None:
    assert CATALOG.classify("    raise ReadTimeoutError(") is None
    assert CATALOG.classify("ERROR [core.py:1]     raise RuntimeError(") is None
    assert CATALOG.classify("RuntimeError: boom") is not None


def test_split_alternatives_respects_groups_classes_and_escapes() -> None:
    assert split_alternatives(r"a\|b|[|x]|(c|d)|e") == [r"a\|b", "[|x]", "(c|d)", "e"]
    assert split_alternatives(r"[]|]x|y") == ["[]|]x", "y"]
    for pattern in CATALOG.patterns:
        assert "|".join(a.regex.pattern for a in pattern.alternatives).count("|") == (
            pattern.regex.pattern.count("|")
        )


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["patterns"][0].update(category="not-a-category"),
        lambda d: d["patterns"][0].update(anchors=["NoT LoWeR"]),
        lambda d: d["patterns"][0].update(regex="(unbalanced"),
        lambda d: d["patterns"][0].update(anchors=["zzz-uncovered"]),
        lambda d: d["patterns"].append(dict(d["patterns"][0])),
    ],
)
def test_malformed_catalogs_are_rejected(mutate: Any) -> None:
    data = _raw_catalog()
    mutate(data)
    with pytest.raises(CatalogError):
        parse_catalog(data)


def test_grep_export_converts_python_only_syntax() -> None:
    ere = to_grep_ere(r"(?P<key>a)(?:b)\d+[^x]\]$|^FAILED: ")
    assert "(?" not in ere and r"\d" not in ere and r"\]" not in ere
    assert ere.startswith("(a)(b)[0-9]+[^x]]$|^(")  # `^` may be preceded by a timestamp
    assert len(grep_patterns()) == len(CATALOG.patterns)


@pytest.mark.skipif(shutil.which("grep") is None, reason="grep not installed")
def test_grep_accepts_the_exported_patterns_and_finds_the_examples(tmp_path: Path) -> None:
    patterns = tmp_path / "catalog.ere"
    patterns.write_text("\n".join(grep_patterns()) + "\n", encoding="utf-8")
    examples = tmp_path / "examples.log"
    lines = [example for _, example in _examples()]
    examples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = subprocess.run(
        ["grep", "-E", "-c", "-f", str(patterns), str(examples)],
        capture_output=True, text=True, check=False, env={"LC_ALL": "C.UTF-8"},
    )
    assert proc.stderr == ""
    assert int(proc.stdout) == len(lines)
