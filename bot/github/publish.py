"""Publish a report: one check run per head, one review per new head, one summary comment.

Idempotent: with the state returned by the previous run, publishing the same report
for the same head makes no calls at all; the store keeps that state, and when it is
missing (the CLI, a lost database) it is recovered from the PR's comments and reviews.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from bot.core.report import Report, Waiver
from bot.core.snapshot import PullRequestSnapshot
from bot.github.calls import ApiCall, Flow, GitHubError, paginate, repo_path
from bot.github.pr_state import CheckRef, Known, PrState, digest
from bot.render import jsonout, markdown, markers, mdsafe
from bot.render.checkrun import (
    ACTIONS,
    CHECK_NAME,
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


def _by(item: dict[str, Any], login: str) -> bool:
    return str((item.get("user") or {}).get("login", "")).lower() == login.lower()


def recover_state(owner: str, repo: str, number: int, bot_login: str) -> Flow[PrState]:
    """What this bot already published on the PR, read back from GitHub."""
    base = repo_path(owner, repo)
    comments = yield from paginate(f"{base}/issues/{number}/comments", "issues/list-comments")
    state = PrState()
    summary = next((c for c in comments if _by(c, bot_login)
                    and markers.is_summary(c.get("body") or "")), None)
    if summary is not None:
        state = PrState.from_summary(summary["body"])
        state.summary_id = summary["id"]
        state.summary_digest = digest(markers.without_state(summary["body"]))
    reviews = yield from paginate(f"{base}/pulls/{number}/reviews", "pulls/list-reviews")
    for review in reviews:
        body = review.get("body") or ""
        if _by(review, bot_login) and markers.is_review(body):
            state.posted.extend(markers.fingerprints_in(body))
            state.review_shas.append(str(review.get("commit_id")))
    state.history_known = True
    return state


def known_state(owner: str, repo: str, number: int, bot_login: str,
                prior_state: dict[str, Any] | None) -> Flow[PrState]:
    """The prior state, recovered from GitHub when it does not know the PR's history."""
    given = PrState.from_dict(prior_state)
    if given.history_known:
        return given
    state = yield from recover_state(owner, repo, number, bot_login)
    if given.check is not None:  # a check run just started (or failed) outranks old ones
        state.check = given.check
        state.report_digest, state.inputs_digest = given.report_digest, given.inputs_digest
    return state


def _refused(state: PrState, what: str, call: ApiCall, status: int, message: str) -> None:
    detail = f" ({message})" if message else ""
    state.notes.append(f"{what} not published: GitHub answered {status}{detail} "
                       f"to {call.operation}")


def _check_call(owner: str, repo: str, check_id: int | None, body: dict[str, Any]) -> ApiCall:
    base = f"{repo_path(owner, repo)}/check-runs"
    if check_id is None:
        return ApiCall("POST", base, body=body, operation="checks/create")
    return ApiCall("PATCH", f"{base}/{check_id}", body=body, operation="checks/update")


def _write_check(
    state: PrState, owner: str, repo: str, head: str, fields: dict[str, Any], reuse: bool
) -> Flow[int | None]:
    """Update the head's check run when `reuse`, else (or if it is gone) create one."""
    existing = state.check.id if reuse and state.check else None
    call = _check_call(owner, repo, existing, fields)
    result = yield call
    if result.status == 404 and existing is not None:
        call = _check_call(owner, repo, None, {"name": CHECK_NAME, "head_sha": head, **fields})
        result = yield call
    if result.status == 403:  # e.g. a personal token: only Apps may write check runs
        _refused(state, "Check run", call, result.status, result.message)
        return None
    if not result.ok:
        raise GitHubError(call, result)
    return int(result.data["id"])


def start_check(owner: str, repo: str, head_sha: str, prior_state: dict[str, Any] | None
                ) -> Flow[dict[str, Any]]:
    """Show an `in_progress` check run while the review runs; publish completes it."""
    state = PrState.from_dict(prior_state)
    if state.check and state.check.head_sha == head_sha and state.check.status != "completed":
        return state.to_dict()
    fields = {"name": CHECK_NAME, "head_sha": head_sha, "status": "in_progress", "output": {
        "title": "Review in progress",
        "summary": f"Reviewing the CI-stability surfaces changed at `{head_sha[:7]}`.",
    }}
    check_id = yield from _write_check(state, owner, repo, head_sha, fields, reuse=False)
    if check_id is not None:
        state.check = CheckRef(check_id, head_sha, "in_progress")
    return state.to_dict()


def fail_check(
    owner: str, repo: str, head_sha: str, prior_state: dict[str, Any] | None, *,
    summary: str = CRASH_SUMMARY, conclusion: str = "neutral", buttons: bool = True,
) -> Flow[dict[str, Any]]:
    """Record a crashed review on the head's check run: `neutral` unless `on_error: failure`
    (a crash of this bot must not block merges behind a required check)."""
    state = PrState.from_dict(prior_state)
    current = state.check if state.check and state.check.head_sha == head_sha else None
    fields = {"status": "completed", "conclusion": conclusion,
              "actions": list(ACTIONS) if buttons else [],
              "output": {"title": "Review failed", "summary": mdsafe.text(summary)}}
    reuse = current is not None and (current.status != "completed" or current.annotations == 0)
    if not reuse:
        fields = {"name": CHECK_NAME, "head_sha": head_sha, **fields}
    check_id = yield from _write_check(state, owner, repo, head_sha, fields, reuse)
    if check_id is not None:
        state.check = CheckRef(check_id, head_sha, "completed")
    # Whatever was published before no longer matches the check: publish again next time.
    state.report_digest = state.inputs_digest = None
    return state.to_dict()


def _publish_check(state: PrState, report: Report, owner: str, repo: str, head: str,
                   report_key: str, waivers_text: str, buttons: bool) -> Flow[None]:
    current = state.check if state.check and state.check.head_sha == head else None
    if current and current.status == "completed" and state.report_digest == report_key:
        return
    output = check_run_output(report, waivers_text)
    batches = annotation_batches(output.pop("annotations"))
    first = {**output, "annotations": batches[0]} if batches else output
    fields: dict[str, Any] = {"status": "completed", "conclusion": report.conclusion,
                              "output": first, "actions": list(ACTIONS) if buttons else []}
    # Annotations only ever append: a run that already holds some cannot take a
    # different report, so that gets a fresh run (GitHub shows the newest).
    reuse = current is not None and (current.status != "completed" or current.annotations == 0)
    if not reuse:
        fields = {"name": CHECK_NAME, "head_sha": head, **fields}
    check_id = yield from _write_check(state, owner, repo, head, fields, reuse)
    if check_id is None:
        state.check = None
        return
    for batch in batches[1:]:
        call = _check_call(owner, repo, check_id, {"output": {**output, "annotations": batch}})
        result = yield call
        if not result.ok:
            raise GitHubError(call, result)
    state.check = CheckRef(check_id, head, "completed", sum(len(b) for b in batches))


def _publish_review(state: PrState, report: Report, snapshot: PullRequestSnapshot, owner: str,
                    repo: str, number: int, head: str, max_comments: int) -> Flow[None]:
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
    result = yield call
    if result.status in {403, 422}:  # the findings stay in the summary comment
        _refused(state, "Inline review", call, result.status, result.message)
        return
    if not result.ok:
        raise GitHubError(call, result)
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


def _publish_summary(state: PrState, report: Report, owner: str, repo: str, number: int,
                     had_open: bool) -> Flow[None]:
    if not report.findings and (state.summary_id is None or not had_open):
        return  # a clean PR gets only the check; an all-clear summary stays as it is
    body = summary_body(report, state)
    # Compared without the hidden state: a re-run that changes nothing a reader sees
    # (only, say, the check run's id) does not edit the comment.
    if digest(markers.without_state(body)) == state.summary_digest:
        return
    call = _summary_call(owner, repo, number, state.summary_id, body)
    result = yield call
    if result.status == 404 and state.summary_id is not None:
        state.summary_id = None  # deleted by someone: post a new one if still needed
        if not report.findings:
            return
        call = _summary_call(owner, repo, number, None, body)
        result = yield call
    if result.status == 403:
        _refused(state, "Summary comment", call, result.status, result.message)
        return
    if not result.ok:
        raise GitHubError(call, result)
    state.summary_id = int(result.data["id"])
    state.summary_digest = digest(markers.without_state(body))


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
    buttons: bool = True, check_only: bool = False,
) -> Flow[dict[str, Any]]:
    """Publish `report` for the snapshot's head; returns the state to persist.
    `buttons`: *Re-run review*, which only the App (requested_action webhook) honours;
    `check_only`: the check run alone, no review and no summary comment."""
    if snapshot.number is None or snapshot.head_sha is None:
        raise ValueError("publishing needs the snapshot's PR number and head SHA")
    number, head = snapshot.number, snapshot.head_sha
    state = yield from known_state(owner, repo, number, bot_login, prior_state)
    state.notes = []
    waivers_text = waivers_markdown(waivers)
    report_key = report_digest(report, waivers_text)
    current = _known(report)
    waived = {s.finding.fingerprint for s in report.suppressed}
    resolved = dict(state.resolved) if state.head_sha == head else {}
    resolved.update({fp: k for fp, k in state.open.items() if fp not in waived})
    had_open = bool(state.open)

    yield from _publish_check(state, report, owner, repo, head, report_key, waivers_text, buttons)
    if not check_only:
        yield from _publish_review(state, report, snapshot, owner, repo, number, head,
                                   max_comments)
    state.head_sha, state.report_digest, state.inputs_digest = head, report_key, inputs_digest
    state.open, state.history_known = current, True
    state.resolved = {fp: k for fp, k in resolved.items() if fp not in current}
    if not check_only:
        yield from _publish_summary(state, report, owner, repo, number, had_open)
    return state.to_dict()
