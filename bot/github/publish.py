"""Publish a report: one check run per head, one review per new head, one summary comment.

Idempotent: with the state returned by the previous run, publishing the same report
for the same head makes no calls at all; the store keeps that state, and when it is
missing (the CLI, a lost database) it is recovered from the PR's comments and reviews
(bot/github/recovery.py). Exactly once across crashes: every write is journaled
(bot/github/journal.py), and a run that finds a write of a dead one in doubt reads
GitHub back for it (check_run.py, recovery.py) instead of writing it again.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

from bot.core.report import Report, Waiver
from bot.core.snapshot import PullRequestSnapshot
from bot.github.calls import ApiCall, Flow, GitHubError, repo_path
from bot.github.check_run import (
    create_check,
    head_check,
    reconcile_check,
    refused,
    send_annotations,
    write_check,
)
from bot.github.journal import SUMMARY_STEP, Journal, MemoryJournal, review_step
from bot.github.pr_state import CheckRef, Known, PrState, digest
from bot.github.recovery import known_state, reconcile_review, reconcile_summary
from bot.render import jsonout, markdown, markers, mdsafe
from bot.render.checkrun import (
    ACTIONS,
    annotation_batches,
    check_run_output,
    waivers_markdown,
)
from bot.render.review import MAX_COMMENTS, review_comments

RESOLVED_SHOWN = 50
CRASH_SUMMARY = (
    "The review could not finish because of an internal error; it will be retried. "
    "Comment `/stability review` on the pull request to run it again."
)


def report_digest(report: Report, waivers_text: str = "") -> str:
    data = [jsonout.report_dict(report), report.sections, report.head_sha, waivers_text]
    if report.check_sections:  # appended only when present: old digests stay valid
        data.append(report.check_sections)
    return digest(json.dumps(data, sort_keys=True, default=str))


def _in_progress(head_sha: str) -> dict[str, Any]:
    return {"status": "in_progress", "output": {
        "title": "Review in progress",
        "summary": f"Reviewing the CI-stability surfaces changed at `{head_sha[:7]}`.",
    }}


def start_check(owner: str, repo: str, head_sha: str, prior_state: dict[str, Any] | None,
                journal: Journal | None = None) -> Flow[dict[str, Any]]:
    """Show an `in_progress` check run while the review runs; publish completes it. A
    re-run on the same head runs in the head's existing run: never a second one."""
    state = PrState.from_dict(prior_state)
    journal = journal or MemoryJournal()
    yield from reconcile_check(state, journal, owner, repo, head_sha)
    current = head_check(state, head_sha)
    if current is not None and current.status != "completed":
        return state.to_dict()
    fields = _in_progress(head_sha)
    if current is not None:
        check_id = yield from write_check(state, journal, owner, repo, head_sha, fields, True)
    else:
        check_id = yield from create_check(state, journal, owner, repo, head_sha, fields)
    if check_id is not None:
        kept = current if current is not None and current.id == check_id else None
        state.check = CheckRef(check_id, head_sha, "in_progress",
                               kept.annotations if kept else 0,
                               kept.annotations_digest if kept else None)
    return state.to_dict()


def fail_check(
    owner: str, repo: str, head_sha: str, prior_state: dict[str, Any] | None, *,
    summary: str = CRASH_SUMMARY, conclusion: str = "neutral", buttons: bool = True,
    journal: Journal | None = None,
) -> Flow[dict[str, Any]]:
    """Record a crashed review on the head's check run: `neutral` unless `on_error: failure`
    (a crash of this bot must not block merges behind a required check)."""
    state = PrState.from_dict(prior_state)
    journal = journal or MemoryJournal()
    yield from reconcile_check(state, journal, owner, repo, head_sha)
    current = head_check(state, head_sha)
    fields = {"status": "completed", "conclusion": conclusion,
              "actions": list(ACTIONS) if buttons else [],
              "output": {"title": "Review failed", "summary": mdsafe.text(summary)}}
    reuse = current is not None and (current.status != "completed" or current.annotations == 0)
    check_id = yield from write_check(state, journal, owner, repo, head_sha, fields, reuse)
    if check_id is not None:
        kept = current if current is not None and current.id == check_id else None
        state.check = CheckRef(check_id, head_sha, "completed", kept.annotations if kept else 0,
                               kept.annotations_digest if kept else None)
    # Whatever was published before no longer matches the check: publish again next time.
    state.report_digest = state.inputs_digest = None
    return state.to_dict()


def _publish_check(state: PrState, journal: Journal, report: Report, owner: str, repo: str,
                   head: str, report_key: str, waivers_text: str, buttons: bool) -> Flow[None]:
    current = head_check(state, head)
    if current and current.status == "completed" and state.report_digest == report_key:
        return
    output = check_run_output(report, waivers_text)
    notes = output.pop("annotations")
    key = digest(json.dumps(notes, sort_keys=True, default=str))
    batches = annotation_batches(notes)
    fields: dict[str, Any] = {"status": "completed", "conclusion": report.conclusion,
                              "output": output, "actions": list(ACTIONS) if buttons else []}
    # Annotations only ever append: a run that holds other ones cannot take this
    # report, so that gets a fresh run (GitHub shows the newest); one that holds these
    # (a re-run of an unchanged head) takes no annotation twice.
    reuse = current is not None and (current.annotations == 0
                                     or current.annotations_digest == key)
    for attempt in range(2):
        if not reuse or attempt:
            check_id = yield from create_check(state, journal, owner, repo, head, fields)
            if check_id is None:
                state.check = None
                return
            state.check = CheckRef(check_id, head, "completed")
        try:
            count = yield from send_annotations(
                state, journal, owner, repo, state.check.id if state.check else 0, output,
                batches, key, first=fields if reuse and not attempt else None)
        except GitHubError as exc:
            if not (reuse and not attempt and exc.status in {403, 404}):
                raise
            if exc.status == 403:
                refused(state, "Check run", exc.operation, exc.status, exc.result.message)
                state.check = None
                return
            state.check = None  # deleted (or another installation's): start afresh
            continue
        assert state.check is not None
        state.check = CheckRef(state.check.id, head, "completed", count, key)
        return


def _publish_review(state: PrState, journal: Journal, report: Report,
                    snapshot: PullRequestSnapshot, owner: str, repo: str, number: int,
                    head: str, max_comments: int) -> Flow[None]:
    if head in state.review_shas:
        return
    plan = review_comments(report, snapshot, set(state.posted), max_comments)
    if not plan.comments:
        return
    call = ApiCall(
        "POST", f"{repo_path(owner, repo)}/pulls/{number}/reviews", operation="pulls/create-review",
        body={"commit_id": head, "event": "COMMENT", "body": plan.body,
              "comments": list(plan.comments)},
    )
    journal.intend(review_step(head), {})
    result = yield call
    if result.status in {403, 422}:  # the findings stay in the summary comment
        refused(state, "Inline review", call.operation, result.status, result.message)
        return
    if not result.ok:
        raise GitHubError(call, result)
    journal.record(review_step(head), {"id": int(result.data["id"]),
                                       "fingerprints": list(plan.fingerprints)})
    state.posted.extend(plan.fingerprints)
    state.review_shas.append(head)


def _resolved_section(resolved: dict[str, Known], clean: bool) -> tuple[str, str]:
    title = "All findings resolved" if clean else "Resolved since the previous push"
    lines = [
        f"- ✅ {mdsafe.code(k.rule)} at "
        f"{mdsafe.code(k.path + (f':{k.line}' if k.line else '')) if k.path else 'pull request'}"
        for k in list(resolved.values())[:RESOLVED_SHOWN]
    ]
    if len(resolved) > RESOLVED_SHOWN:
        lines.append(f"- … and {len(resolved) - RESOLVED_SHOWN} more")
    return title, "\n".join(lines) + "\n"  # the footer must not join the list


def summary_body(report: Report, state: PrState) -> str:
    sections = report.sections
    if state.resolved:
        sections = (*sections, _resolved_section(state.resolved, not report.findings))
    marker = state.embedded()
    body = markdown.render(dataclasses.replace(report, sections=sections),
                           limit=markdown.COMMENT_LIMIT - len(marker) - 1)
    return f"{body}\n{marker}"


def _summary_call(owner: str, repo: str, number: int, comment_id: int | None,
                  body: str) -> ApiCall:
    base = repo_path(owner, repo)
    if comment_id is None:
        return ApiCall("POST", f"{base}/issues/{number}/comments", body={"body": body},
                       operation="issues/create-comment")
    return ApiCall("PATCH", f"{base}/issues/comments/{comment_id}", body={"body": body},
                   operation="issues/update-comment")


def _publish_summary(state: PrState, journal: Journal, report: Report, owner: str, repo: str,
                     number: int, had_open: bool) -> Flow[None]:
    if not report.findings and (state.summary_id is None or not had_open):
        return  # a clean PR gets only the check; an all-clear summary stays as it is
    body = summary_body(report, state)
    # Compared without the hidden state: a re-run that changes nothing a reader sees
    # (only, say, the check run's id) does not edit the comment.
    if digest(markers.without_state(body)) == state.summary_digest:
        return
    seen = digest(markers.without_state(body))
    if state.summary_id is None:
        journal.intend(SUMMARY_STEP, {})
    call = _summary_call(owner, repo, number, state.summary_id, body)
    result = yield call
    if result.status == 404 and state.summary_id is not None:
        state.summary_id = None  # deleted by someone: post a new one if still needed
        if not report.findings:
            return
        journal.intend(SUMMARY_STEP, {})
        call = _summary_call(owner, repo, number, None, body)
        result = yield call
    if result.status == 403:
        refused(state, "Summary comment", call.operation, result.status, result.message)
        return
    if not result.ok:
        raise GitHubError(call, result)
    state.summary_id, state.summary_digest = int(result.data["id"]), seen
    if call.method == "POST":
        journal.record(SUMMARY_STEP, {"id": state.summary_id, "digest": seen})


def _known(report: Report) -> dict[str, Known]:
    return {f.fingerprint: Known(f.rule, f.path, f.line, str(f.severity))
            for f in report.findings}


def publish(
    report: Report,
    snapshot: PullRequestSnapshot,
    owner: str,
    repo: str,
    prior_state: dict[str, Any] | None,
    bot_login: str,
    waivers: Sequence[Waiver] = (),
    *,
    inputs_digest: str | None = None,
    max_comments: int = MAX_COMMENTS,
    buttons: bool = True, check_only: bool = False, journal: Journal | None = None,
    superseded: Callable[[], bool] | None = None,
) -> Flow[dict[str, Any]]:
    """Publish `report` for the snapshot's head; returns the state to persist.
    `buttons`: *Re-run review*, which only the App (requested_action webhook) honours;
    `check_only`: the check run alone, no review and no summary comment; `journal`:
    where each write's intent and result are kept, so that after a crash what landed
    is taken in, not written again (bot/github/journal.py); `superseded`: asked after
    the check run, True when a newer push will review the PR (the newest head wins)."""
    if snapshot.number is None or snapshot.head_sha is None:
        raise ValueError("publishing needs the snapshot's PR number and head SHA")
    number, head = snapshot.number, snapshot.head_sha
    state = yield from known_state(owner, repo, number, bot_login, prior_state)
    journal = journal or MemoryJournal()
    yield from reconcile_check(state, journal, owner, repo, head)
    if not check_only:
        yield from reconcile_review(state, journal, owner, repo, number, head, bot_login)
        yield from reconcile_summary(state, journal, owner, repo, number, bot_login)
    state.notes = []
    waivers_text = waivers_markdown(waivers)
    report_key = report_digest(report, waivers_text)
    current = _known(report)
    waived = {s.finding.fingerprint for s in report.suppressed}
    resolved = dict(state.resolved) if state.head_sha == head else {}
    resolved.update({fp: k for fp, k in state.open.items() if fp not in waived})
    had_open = bool(state.open)

    yield from _publish_check(state, journal, report, owner, repo, head, report_key,
                              waivers_text, buttons)
    if superseded is not None and superseded():
        # The check describes this head; the review and summary are the newer one's.
        state.report_digest = state.inputs_digest = None
        return state.to_dict()
    if not check_only:
        yield from _publish_review(state, journal, report, snapshot, owner, repo, number, head,
                                   max_comments)
    state.head_sha, state.report_digest, state.inputs_digest = head, report_key, inputs_digest
    state.open, state.history_known = current, True
    state.resolved = {fp: k for fp, k in resolved.items() if fp not in current}
    if not check_only:
        yield from _publish_summary(state, journal, report, owner, repo, number, had_open)
    return state.to_dict()
