"""Counting what `serve` published on the fake GitHub, for the race and kill tests and
bench/bench_kill_publish.py: exactly one of each, per head."""

from __future__ import annotations

from collections import Counter

from bot.render import markers
from bot.store import open_store
from tests.fakegithub import FakeGitHub
from tests.github.kit import REPO

BOT = "ci-stability-bot[bot]"


def summaries(fake: FakeGitHub, number: int = 7) -> list[object]:
    return [c for c in fake.issue_comments(REPO, number)
            if c.user == BOT and markers.is_summary(c.body)]


def settled(db: str) -> bool:
    """No delivery is pending or running (every one done, superseded or dead)."""
    store = open_store(db)
    try:
        counts = store.counts()
    finally:
        store.close()
    return counts["pending"] == 0 and counts["running"] == 0


def dead_letters(db: str) -> int:
    store = open_store(db)
    try:
        return store.counts()["dead"]
    finally:
        store.close()


def doubled(fake: FakeGitHub, number: int = 7) -> dict[str, int]:
    """What was published more than once: check runs, reviews per head, summaries, and
    annotations (the same annotation twice on one run)."""
    found: dict[str, int] = {}
    runs = Counter(c.head_sha for c in fake.check_runs(REPO))
    found.update({f"check_runs@{h[:7]}": n for h, n in runs.items() if n > 1})
    reviews = Counter(r.commit_id for r in fake.reviews(REPO, number))
    found.update({f"reviews@{h[:7]}": n for h, n in reviews.items() if n > 1})
    inline = Counter((c.path, c.line, c.body) for r in fake.reviews(REPO, number)
                     for c in r.comments)
    if any(n > 1 for n in inline.values()):
        found["inline_comments"] = max(inline.values())
    if len(summaries(fake, number)) > 1:
        found["summaries"] = len(summaries(fake, number))
    for run in fake.check_runs(REPO):
        notes = Counter((a["path"], a["start_line"], a["message"]) for a in run.annotations)
        if any(n > 1 for n in notes.values()):
            found[f"annotations@{run.id}"] = max(notes.values())
    return found


def lost(fake: FakeGitHub, head: str, number: int = 7) -> list[str]:
    """What the review of `head` should have published and did not (or left spinning)."""
    missing = []
    runs = fake.check_runs(REPO, head)
    if not runs or runs[-1].status != "completed":
        missing.append("completed check run")
    if any(r.status != "completed" for r in runs):
        missing.append("a check run left in_progress")
    if not any(r.commit_id == head for r in fake.reviews(REPO, number)):
        missing.append("review")
    if not summaries(fake, number):
        missing.append("summary comment")
    return missing


def many_jobs(count: int, *, silenced: bool) -> str:
    """A workflow of `count` jobs, each silenced (`continue-on-error`) when asked: one
    finding per job, so a review carries more than one batch of 50 annotations."""
    flag = "    continue-on-error: true\n" if silenced else ""
    jobs = "".join(f"  job{i}:\n    runs-on: ubuntu-latest\n    timeout-minutes: 30\n{flag}"
                   f"    steps:\n      - run: pytest tests/part{i}\n" for i in range(count))
    return "name: CI\non: [pull_request]\njobs:\n" + jobs


# Each write of one review of such a PR (after `skip` earlier writes of that kind), for a
# kill while its answer is held back: the write has landed, the worker never learns it.
KILL_POINTS: dict[str, tuple[str, str, int]] = {
    "create-check": ("POST", r"/check-runs$", 0),
    "complete-check": ("PATCH", r"/check-runs/\d+$", 0),  # completed + the first batch
    "annotation-batch": ("PATCH", r"/check-runs/\d+$", 1),  # the second batch
    "review": ("POST", r"/pulls/7/reviews$", 0),
    "summary": ("POST", r"/issues/7/comments$", 0),
}
