"""GitHub API calls for one review, counted on the fake GitHub with the real clients.

    .venv/bin/python bench/bench_api_calls.py [--write]

Scenario: a 250-file pull request (60 workflow files that each add
`continue-on-error: true`, 40 modified CPU tests, 150 out-of-scope files) reviewed
with a bench-only rule that flags each `continue-on-error: true` (exactly 60 findings,
independent of how the rule pack evolves; the API calls do not depend on which rules
run, only on the files and the findings). Counted on the server side
(`FakeGitHub.calls`), by operation, for:

1. the App's first review (no stored state yet: what was published is read back);
2. the same webhook redelivered for the unchanged head (target: no writes, <= 3 calls);
3. the next push fixing one finding;
4. the CLI (`--post`, PyGithub) on a fresh PR, then run again on the same head.

`--write` stores the tables in bench/RESULTS-api-calls.md.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.github.drive_sync import SyncDriver  # noqa: E402
from bot.github.review import ReviewRequest, review_pull_request  # noqa: E402
from tests.fakegithub import FakeGitHub, running_fake_github  # noqa: E402
from tests.github.kit import (  # noqa: E402
    APP_ID,
    BOT,
    INSTALLATION,
    NAME,
    OWNER,
    REPO,
    SilencedJob,
    app_keys,
    app_side,
    new_fake,
    push,
    workflow,
)

RULES = (SilencedJob(),)
CONFIG = "fail_on: error\n"
TEST_FILE = "import torch\n\n\ndef test_cpu():\n    assert torch.ones(2).sum() == 2\n"


def pr_files(fixed: int = 0) -> dict[str, tuple[str | None, str | None]]:
    files: dict[str, tuple[str | None, str | None]] = {}
    for i in range(60):
        files[f".github/workflows/suite_{i:02}.yml"] = (
            workflow(), workflow(silenced=i >= fixed, extra=f"# suite {i}\n"))
    for i in range(40):
        files[f"tests/cpu/test_op_{i:02}.py"] = (TEST_FILE, TEST_FILE + f"# case {i}\n")
    for i in range(150):
        files[f"src/pkg/module_{i:03}.py"] = (f"x = {i}\n", f"x = {i + 1}\n")
    return files


def tally(fake: FakeGitHub, start: int) -> dict[str, Any]:
    calls = [c for c in fake.calls[start:]
             if c.operation_id != "apps/create-installation-access-token"]
    ops = Counter(c.operation_id or c.path for c in calls)
    writes = sum(1 for c in calls if c.is_write)
    not_modified = sum(1 for c in calls if c.status == 304)
    return {"total": len(calls), "reads": len(calls) - writes, "writes": writes,
            "304 (free)": not_modified, "ops": ops}


def request(**options: Any) -> ReviewRequest:
    return ReviewRequest(OWNER, NAME, 7, bot_login=BOT, rules=RULES, **options)


async def app_scenarios() -> list[tuple[str, dict[str, Any], int]]:
    fake = new_fake()
    fake.add_file(REPO, ".github/ci-stability.yml", CONFIG)
    push(fake, 7, pr_files(), tag="h1")
    results = []
    async with fake, app_side(fake, cache={}) as app:
        start = len(fake.calls)
        first = await app.run(review_pull_request(request(), None))
        assert first.report is not None
        results.append(("App: first review", tally(fake, start), len(first.report.findings)))
        start = len(fake.calls)
        again = await app.run(review_pull_request(request(), first.state))
        assert again.skipped
        results.append(("App: redelivered webhook, same head", tally(fake, start), 0))
        push(fake, 7, pr_files(fixed=1), tag="h2")
        start = len(fake.calls)
        nxt = await app.run(review_pull_request(request(), again.state))
        assert nxt.report is not None
        results.append(("App: next push (1 finding fixed)", tally(fake, start),
                        len(nxt.report.findings)))
    assert fake.violations == [], fake.violations
    return results


def cli_scenarios() -> list[tuple[str, dict[str, Any], int]]:
    results = []
    with running_fake_github() as gh:
        gh.register_app(APP_ID, app_keys()[1])
        gh.add_installation(INSTALLATION, [REPO])
        token = gh.issue_installation_token(INSTALLATION)
        gh.add_file(REPO, ".github/ci-stability.yml", CONFIG)
        push(gh, 7, pr_files(), tag="h1")
        driver = SyncDriver(token, base_url=gh.url, seconds_between_requests=0,
                            seconds_between_writes=0)
        cli = request(force=True, early_check=False)
        for label in ("CLI --post: first run", "CLI --post: run again, same head"):
            start = len(gh.calls)
            outcome = driver.run(review_pull_request(cli, None))
            assert outcome.report is not None
            results.append((label, tally(gh, start), len(outcome.report.findings)))
        assert gh.violations == [], gh.violations
    return results


def render(results: list[tuple[str, dict[str, Any], int]]) -> str:
    ops = sorted({op for _, t, _ in results for op in t["ops"]})
    head = "| operation | " + " | ".join(label for label, _, _ in results) + " |"
    rule = "|---|" + "---:|" * len(results)
    rows = [f"| `{op}` | " + " | ".join(str(t["ops"].get(op, 0)) or "0" for _, t, _ in results)
            + " |" for op in ops]
    for key in ("reads", "writes", "total", "304 (free)"):
        rows.append(f"| **{key}** | " + " | ".join(str(t[key]) for _, t, _ in results) + " |")
    rows.append("| findings | " + " | ".join(str(n) for _, _, n in results) + " |")
    return "\n".join([head, rule, *rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS-api-calls.md")
    args = parser.parse_args()
    results = asyncio.run(app_scenarios()) + cli_scenarios()
    table = render(results)
    print(table)
    redelivery = results[1][1]
    ok = redelivery["writes"] == 0 and redelivery["total"] <= 3
    print(f"\nredelivery target (no writes, <= 3 calls): {'met' if ok else 'MISSED'}")
    if args.write:
        (ROOT / "bench" / "RESULTS-api-calls.md").write_text(RESULTS.format(table=table))
    return 0 if ok else 1


RESULTS = """# GitHub API calls per review

Command: `.venv/bin/python bench/bench_api_calls.py --write` (the fake GitHub in
`tests/fakegithub/` on loopback, the App's real client stack — JWT, installation token,
gidgethub on aiohttp — and the CLI's PyGithub; calls counted by the server, installation
token minting excluded).

Pull request: 250 files — 60 workflows that each add `continue-on-error: true`, 40 modified
CPU tests, 150 out-of-scope source files; a bench-only rule flags each
`continue-on-error: true` (60 findings; the call counts depend on files and findings, not
on which rules run).

{table}

Reading the table:

- **First review** (no stored state: the App reads its earlier comment and reviews back,
  2 reads): the PR, the config from the default branch, 3 pages of files (100 per page,
  following `Link`), one contents call per *modified in-scope* file for its head text
  (bases are rebuilt by undoing the patch; added/removed files come from the patch;
  out-of-scope files cost nothing), an `in_progress` check run, its completion carrying
  the first 50 annotations plus one more PATCH for the remaining 10, one review (inline
  comments capped at 30 per review; the other 30 are in the summary and are posted
  inline with the next head's review) and one summary comment.
- **Redelivered webhook, same head**: the PR and the config only (the config answered
  `304` from the App's ETag cache, free of rate limit; the PR object changed because the
  bot's own review and comment bump its `updated_at`), then the stored state shows that
  nothing the report depends on changed: **no writes, 2 calls** (target ≤ 3).
- **Next push**: a new check run; one review with the 30 findings the first review's cap
  held back (none is posted twice); the summary edited in place, listing the resolved one.
- **CLI**: the same flows driven by PyGithub; with no store it reads back its summary
  comment (which carries a hidden copy of the state) and its reviews, so running it again
  on the same head writes nothing.

Contents calls dominate (one per modified in-scope file): the contents API is the only
file-reading operation the bot may use, so a PR touching many in-scope files costs that
many reads; 304s from the ETag cache do not count against the rate limit.
"""


if __name__ == "__main__":
    raise SystemExit(main())
