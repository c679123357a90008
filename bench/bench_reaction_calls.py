"""Extra GitHub API calls for reading 👎 reactions as misfires, on the fake GitHub with
the App's real client stack (the live App of tests/app/e2e_kit.py).

    .venv/bin/python bench/bench_reaction_calls.py

Scenario: a PR of 20 workflow files that each add `continue-on-error: true`, so the
first review posts 20 inline comments. Then, per later push (each a new head, so each
a full review), counted on the server side: the review's own calls and the reaction
reads (list review comments, list a comment's 👎, a user's permission):

1. no reaction yet;
2. 10 comments got a 👎 from 2 maintainers and 1 reader (30 reactions);
3. nothing changed since;
4. one more maintainer's 👎 on one comment.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.app.e2e_kit import REPO, LiveApp, live_app, pr_payload  # noqa: E402
from tests.github.kit import push, workflow  # noqa: E402

FILES = 20
READS = ("pulls/list-review-comments", "reactions/list-for-pull-request-review-comment",
         "repos/get-collaborator-permission-level")


async def _review(app: LiveApp, step: int) -> tuple[int, dict[str, int]]:
    before = {op: app.fake.count(op) for op in READS}
    total = len(app.fake.calls)
    files = {f".github/workflows/ci{i}.yml": (workflow(), workflow(silenced=True,
                                                                   extra=f"# {step}\n"))
             for i in range(FILES)}
    head = push(app.fake, 7, files, tag=f"h{step}")
    await app.deliver("pull_request", pr_payload("opened" if step == 1 else "synchronize",
                                                 7, head))
    await app.settle()
    reads = {op: app.fake.count(op) - before[op] for op in READS}
    return len(app.fake.calls) - total - sum(reads.values()), reads


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with live_app(Path(tmp)) as app:
            await _review(app, 1)
            inline = [c for r in app.fake.reviews(REPO, 7) for c in r.comments]
            for user, role in (("m1", "maintain"), ("m2", "write"), ("reader", "read"),
                               ("m3", "admin")):
                app.fake.set_permission(REPO, user, role)
            steps = []
            steps.append(("no reaction", *await _review(app, 2)))
            for comment in inline[:10]:
                for user in ("m1", "m2", "reader"):
                    app.fake.react_to_review_comment(comment.id, user, "-1")
            steps.append(("10 comments x 3 👎", *await _review(app, 3)))
            steps.append(("unchanged", *await _review(app, 4)))
            app.fake.react_to_review_comment(inline[0].id, "m3", "-1")
            steps.append(("one more 👎", *await _review(app, 5)))
            (misfires,) = app.store.db.execute("SELECT COUNT(*) FROM misfires").fetchone()
    print(f"inline comments: {len(inline)}; misfires recorded: {misfires}")
    print("| push | review's calls | list comments | list 👎 | permission | extra / review |")
    print("|---|---|---|---|---|---|")
    for name, own, reads in steps:
        extra = sum(reads.values())
        print(f"| {name} | {own} | {reads[READS[0]]} | {reads[READS[1]]} | {reads[READS[2]]} "
              f"| {extra / own:.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
