"""GitHub API calls for one review, counted on the fake GitHub with the real clients.

    .venv/bin/python bench/bench_api_calls.py [--write]

Scenario: a 250-file pull request (60 workflow files that each add
`continue-on-error: true`, 40 modified CPU tests, 150 out-of-scope files) reviewed
with a bench-only rule that flags each `continue-on-error: true` (exactly 60 findings,
independent of how the rule pack evolves; the API calls do not depend on which rules
run, only on the files and the findings). Counted on the server side
(`FakeGitHub.calls`), by operation, for:

1. the App's first review (no stored state yet: what was published is read back;
   target: <= 10 calls);
2. the same webhook redelivered for the unchanged head (target: no writes, <= 2 calls);
3. the next push fixing one finding;
4. the first review again with a second bench-only rule that asks the repository view
   about every changed in-scope file's siblings, as the convention rules do (what the
   App's RepoView costs);
5. the CLI (`--post`, PyGithub) on a fresh PR, then run again on the same head.

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

from bot.core.findings import Finding, Severity  # noqa: E402
from bot.core.rule import RuleContext  # noqa: E402
from bot.github.drive_sync import SyncDriver  # noqa: E402
from bot.github.review import ReviewRequest, review_pull_request  # noqa: E402
from rules.base import Rule  # noqa: E402
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


class SiblingConvention(Rule):
    """Bench-only: lists each changed in-scope file's folder at the base and reads the
    same-suffix siblings (up to 8), like allocator-scope and runtime-download do."""

    id = "bench-sibling-convention"
    severity = Severity.WARNING

    def check(self, ctx: RuleContext) -> list[Finding]:
        view = ctx.snapshot.repo_view
        for changed in ctx.files():
            folder = changed.path.rsplit("/", 1)[0]
            listed = view.list_dir(folder) if view else None
            suffix = changed.path.rsplit(".", 1)[-1]
            for sibling in [p for p in listed or () if p.endswith(suffix)][:8]:
                assert view is not None
                view.read(sibling)
        return []


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


def request(rules: tuple[Rule, ...] = RULES, **options: Any) -> ReviewRequest:
    return ReviewRequest(OWNER, NAME, 7, bot_login=BOT, rules=rules, **options)


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
    results.append(await with_repo_view())
    return results


async def with_repo_view() -> tuple[str, dict[str, Any], int]:
    fake = new_fake()
    fake.add_file(REPO, ".github/ci-stability.yml", CONFIG)
    push(fake, 7, pr_files(), tag="h1")
    async with fake, app_side(fake, cache={}) as app:
        start = len(fake.calls)
        outcome = await app.run(review_pull_request(
            request(rules=(*RULES, SiblingConvention())), None))
        assert outcome.report is not None
    assert fake.violations == [], fake.violations
    return ("App: first review + repository view", tally(fake, start),
            len(outcome.report.findings))


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
    first, redelivery = results[0][1], results[1][1]
    ok_first = first["total"] <= 10
    ok = redelivery["writes"] == 0 and redelivery["total"] <= 2
    print(f"\nfirst review target (<= 10 calls): {'met' if ok_first else 'MISSED'}"
          f" ({first['total']})")
    print(f"redelivery target (no writes, <= 2 calls): {'met' if ok else 'MISSED'}"
          f" ({redelivery['total']})")
    ok = ok and ok_first
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

Reading the table (targets: first review ≤ 10 calls; redelivery ≤ 2 calls, no writes):

- **First review** (no stored state: the App reads its earlier comment and reviews back,
  2 reads): the PR; its 250 files from **one comparison** (`repos/compare-commits-with-
  basehead`, `base...head`, which is the PR's diff; list-files is read instead past 300
  files, when a file has no patch or the count differs from the PR's `changed_files`);
  **one GraphQL query** with the head text of the 100 modified in-scope files, the
  config from the default branch and the listing of the two in-scope directories
  (bases are rebuilt by undoing the patch; added/removed files come from the patch;
  out-of-scope files cost nothing; a file GraphQL cannot give whole — text cut at
  512,000 bytes, an error — is read over the contents API); an `in_progress` check
  run, its completion carrying the first 50 annotations plus one more PATCH for the
  other 10, one review (30 inline comments at most) and one summary comment.
- **Redelivered webhook, same head**: the PR and the config (over the contents API, so
  that a third delivery is a free `304` from the ETag cache), then the stored state
  shows that nothing the report depends on changed: **no writes, 2 calls**.
- **Next push**: a new check run; one review with the 30 findings the first review's cap
  held back (none is posted twice); the summary edited in place.
- **First review + repository view**: a rule asks, for each of the 100 changed in-scope
  files, for its folder's listing (already in the texts query) and 8 sibling texts; the
  view answers None, notes the questions, and one more GraphQL query fetches them all;
  the engine runs again. **The App's RepoView costs 1 call here; never more than 2 per
  review** (`MAX_VIEW_CALLS`; past that, unknown answers stay None).
- **CLI**: the same flows driven by PyGithub (which POSTs the GraphQL query to its own
  GraphQL endpoint); with no store it reads back its summary comment and its reviews,
  so running it again on the same head writes nothing.

Write-side calls (check create + 2 updates, list-comments + list-reviews on a first
review) belong to `bot/github/publish.py` and are unchanged here.
"""


if __name__ == "__main__":
    raise SystemExit(main())
