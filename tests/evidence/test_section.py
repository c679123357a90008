"""The "Prior failing runs" Markdown, evidence links and the `/stability runs` reply."""

from __future__ import annotations

import dataclasses
import re

from bot.core.findings import Evidence, Finding, Severity
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.index import Coverage
from bot.evidence.relevance import find_related
from bot.evidence.section import (
    HEADING,
    attach,
    digest,
    evidence_items,
    render_section,
    runs_reply,
    safe_url,
)
from tests.conftest import make_snapshot
from tests.evidence.factories import GLM_CONFIG, NOW, job, pcp_oom_log

COVERAGE = Coverage(120, 30, NOW.replace(day=1), NOW.replace(hour=3))


def _glm_pr() -> PullRequestSnapshot:
    snapshot = make_snapshot([{"path": GLM_CONFIG, "base": "a: 1\n", "head": "a: 2\n"}])
    return dataclasses.replace(snapshot, repo="vllm-project/vllm", number=51015, base_ref="main")


def _table_rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| ") and "---" not in line]


def test_section_for_the_pcp_oom() -> None:
    failing = job("81913", log=pcp_oom_log(), hours_ago=15, run_id="81913")
    relevance = find_related(_glm_pr(), [failing], now=NOW, coverage=COVERAGE)
    section = render_section(relevance)
    assert section is not None
    assert section.startswith(HEADING)
    assert "index covers 2026-08-01 … 2026-08-05 (120 jobs); newest run 3 h old" in section
    header, row = _table_rows(section)
    assert header.startswith("| Job | When | Classification | Root cause |")
    assert row.startswith(
        "| [LM Eval PCP 4xB200 · Buildkite ci #81913](https://buildkite.com/vllm/ci/builds/1#81913)"
    )
    assert "2026-08-04 15:00 UTC (15 h ago)" in row
    assert "**broken trunk** (1× on `main`)" in row
    assert ("cuda-oom: `[rank3]:[W804 15:02:21.946490582 CUDACachingAllocator.cpp:3933] "
            "memory allocation failed with OOM") in row
    assert "`ERROR tests/evals/gsm8k/test_gsm8k_correctness.py::test_gsm8k_correctness" in row
    # The chain: the server-start timeout the OOM explains, named with its line.
    assert ("<br>exit-code at line 54 ← server-start-timeout at line 53 ← cuda-oom at line 44 "
            "(4 times, last at line 50)") in row
    assert row.endswith("| `GLM-5.2-NVFP4-TP1-PCP4-EP` in surface symptom; "
                        "`GLM-5.2-NVFP4-TP1-PCP4-EP.yaml` in log (+1) |")
    # The row is one table row: as many cells as the header.
    assert row.count(" | ") == header.count(" | ")


def test_hostile_text_cannot_break_the_table_or_forge_markers() -> None:
    hostile = job(
        "x", name="evil | job @maintainer <!-- ci-stability:summary -->",
        line="AssertionError: a|b `tick` @someone <img src=x>", category="assertion",
        surface="FAILED t.py::x | exit", url="javascript:alert(1)",
        mentions=(GLM_CONFIG,), signature="assertion: a|b",
    )
    relevance = find_related(_glm_pr(), [hostile], now=NOW, coverage=COVERAGE)
    section = render_section(relevance)
    assert section is not None
    header, row = _table_rows(section)
    assert row.count(" | ") == header.count(" | ")  # no unescaped cell separators
    assert "<!--" not in section and "@maintainer" not in section
    assert "javascript:" not in section  # not a link target; shown as text only
    assert "](" not in row.split(" | ")[0]
    assert "``AssertionError: a\\|b `tick` @someone <img src=x>``" in row


def test_budget_keeps_the_section_short() -> None:
    jobs = [job(f"j{n}", name=f"LM Eval {n}", log=pcp_oom_log(), hours_ago=n + 1)
            for n in range(25)]
    relevance = find_related(_glm_pr(), jobs, now=NOW, coverage=COVERAGE, limit=20)
    section = render_section(relevance, budget=3000)
    assert section is not None and len(section) <= 3000
    shown = len(_table_rows(section)) - 1
    assert 0 < shown < 20
    match = re.search(r"…and (\d+) more", section)
    assert match is not None and int(match.group(1)) == 25 - shown


def test_nothing_related() -> None:
    relevance = find_related(_glm_pr(), [], now=NOW, coverage=COVERAGE)
    assert render_section(relevance) is None
    reply = runs_reply(relevance)
    assert reply.startswith(HEADING)
    assert "No indexed CI failure mentions the 1 changed file(s)" in reply
    assert "window: last 14 days" in reply


def test_runs_reply_is_the_section_when_there_are_runs() -> None:
    relevance = find_related(_glm_pr(), [job("a", log=pcp_oom_log())], now=NOW)
    assert runs_reply(relevance) == render_section(relevance)


def test_evidence_items_for_failing_run_link() -> None:
    jobs = [job(f"j{n}", name=f"LM Eval {n}", log=pcp_oom_log(), hours_ago=n + 1)
            for n in range(8)]
    jobs.append(job("nolink", name="No URL", log=pcp_oom_log(), url="ftp://x", hours_ago=0.5))
    relevance = find_related(_glm_pr(), jobs, now=NOW)
    items = evidence_items(relevance)
    assert len(items) == 5
    assert items[0] == Evidence(
        title="LM Eval 0 (Buildkite ci #run-j0, 2026-08-05, cuda-oom; broken trunk)",
        url="https://buildkite.com/vllm/ci/builds/1#j0",
    )


def test_safe_url() -> None:
    assert safe_url("https://buildkite.com/vllm/ci/builds/1#abc") == (
        "https://buildkite.com/vllm/ci/builds/1#abc")
    assert safe_url("https://x.test/a b(c)") == "https://x.test/a%20b%28c%29"
    assert safe_url("javascript:alert(1)") is None
    assert safe_url("data:text/html,x") is None
    assert safe_url(None) is None


def test_attach_adds_the_section_and_links_failing_run_link_findings() -> None:
    link = Finding("failing-run-link", Severity.WARNING, "Link the failing run.", key="k")
    other = Finding("dedup-note", Severity.WARNING, "Say why this is not a duplicate.")
    report = Report(findings=(link, other))
    relevance = find_related(_glm_pr(), [job("a", log=pcp_oom_log())], now=NOW)
    attached = attach(report, relevance)
    assert [title for title, _ in attached.sections] == ["Prior failing runs"]
    assert attached.sections[0][1].endswith("|\n")  # a blank line ends the table
    assert attached.findings[0].evidence == evidence_items(relevance)
    assert attached.findings[1] == other
    nothing = find_related(_glm_pr(), [], now=NOW)
    assert attach(report, nothing) is report
    assert digest(relevance) != digest(nothing)
    assert digest(relevance) == digest(find_related(_glm_pr(), [job("a", log=pcp_oom_log())],
                                                    now=NOW))
