"""The bundled examples produce exactly the findings examples/expected.json lists."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bot.core.config import Config
from bot.core.engine import review
from bot.sources.prjson import snapshot_from_pr_json
from rules import ALL_RULES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_findings(name: str) -> None:
    snapshot = snapshot_from_pr_json((EXAMPLES / name).read_bytes())
    report = review(snapshot, Config(), ALL_RULES)
    got = Counter((f.rule, f.path, str(f.severity)) for f in report.findings)
    want = Counter((e["rule"], e["path"], e["severity"]) for e in EXPECTED[name])
    detail = [(f.rule, f.path, f.line, str(f.severity), f.message) for f in report.findings]
    assert got == want, detail
    assert report.errors == ()


def test_clean_example_is_green() -> None:
    snapshot = snapshot_from_pr_json((EXAMPLES / "vllm-51015-glm-pcp-allocator.json").read_bytes())
    assert review(snapshot, Config(), ALL_RULES).conclusion == "success"
