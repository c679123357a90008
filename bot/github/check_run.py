"""The head's check run, written exactly once across crashes: created under a journal
intent with an `external_id` naming the repository and head, adopted (listed for the
ref) when a create was in flight at a crash, and fed its annotations batch by batch
with the journal counting what landed.
"""

from __future__ import annotations

from typing import Any

from bot.github.calls import ApiCall, Flow, GitHubError, paginate, repo_path
from bot.github.journal import Journal, annotations_step, check_step
from bot.github.pr_state import CheckRef, PrState, digest
from bot.render.checkrun import CHECK_NAME

SUPERSEDED = {"status": "completed", "conclusion": "neutral", "output": {
    "title": "Superseded",
    "summary": "A newer review replaced this run; see the newest `" + CHECK_NAME + "` run.",
}}


def external_id(owner: str, repo: str, head: str) -> str:
    """Names the run on our side: one review check per repository and head."""
    return "ci-stability:" + digest(f"{owner}/{repo}@{head}")


def refused(state: PrState, what: str, operation: str, status: int, message: str) -> None:
    detail = f" ({message})" if message else ""
    state.notes.append(f"{what} not published: GitHub answered {status}{detail} "
                       f"to {operation}")


def check_call(owner: str, repo: str, check_id: int | None, body: dict[str, Any]) -> ApiCall:
    base = f"{repo_path(owner, repo)}/check-runs"
    if check_id is None:
        return ApiCall("POST", base, body=body, operation="checks/create")
    return ApiCall("PATCH", f"{base}/{check_id}", body=body, operation="checks/update")


def head_check(state: PrState, head: str) -> CheckRef | None:
    return state.check if state.check and state.check.head_sha == head else None


def find_check(owner: str, repo: str, head: str, *, newer_than: int = 0,
               run_id: int | None = None) -> Flow[CheckRef | None]:
    """Our newest run on the head (by `external_id`), or the run `run_id`, as GitHub
    has it; None when there is none (or the token may not list check runs)."""
    try:
        runs = yield from paginate(
            f"{repo_path(owner, repo)}/commits/{head}/check-runs", "checks/list-for-ref",
            params={"check_name": CHECK_NAME, "filter": "all"}, item_key="check_runs")
    except GitHubError as exc:
        if exc.status in {403, 404}:
            return None
        raise
    ours = [r for r in runs if isinstance(r, dict) and (
        int(r.get("id") or 0) == run_id if run_id is not None
        else r.get("external_id") == external_id(owner, repo, head)
        and int(r.get("id") or 0) > newer_than)]
    if not ours:
        return None
    run = max(ours, key=lambda r: int(r["id"]))
    status = "completed" if run.get("status") == "completed" else "in_progress"
    count = int((run.get("output") or {}).get("annotations_count") or 0)
    return CheckRef(int(run["id"]), head, status, count)


def reconcile_check(state: PrState, journal: Journal, owner: str, repo: str,
                    head: str) -> Flow[None]:
    """Bring `state.check` up to what landed on GitHub for this head, as far as the
    journal says a write of an interrupted run may have."""
    entries = journal.entries()
    step = check_step(head)
    entry = entries.get(step)
    current = head_check(state, head)
    if entry is not None:
        replaces = int(entry.intent.get("replaces") or 0)
        if entry.result is not None:
            made = int(entry.result["id"])
            if current is None or current.id != made:
                current = CheckRef(made, head, str(entry.result.get("status") or "in_progress"))
        elif current is None or current.id == replaces:  # the create may have landed
            found = yield from find_check(owner, repo, head, newer_than=replaces)
            if found is not None:
                journal.record(step, {"id": found.id, "status": found.status})
                current = found
    if current is None:
        return
    ann = entries.get(annotations_step(current.id))
    if ann is not None and ann.intent.get("digest"):
        wanted, total = str(ann.intent["digest"]), int(ann.intent.get("count") or 0)
        result = ann.result or {}
        landed = int(result.get("sent") or 0) if result.get("digest") == wanted else 0
        if landed < total:  # a batch was in flight: count what the run holds
            found = yield from find_check(owner, repo, head, run_id=current.id)
            if found is not None:
                landed = found.annotations
                journal.record(annotations_step(current.id), {"digest": wanted, "sent": landed})
        current = CheckRef(current.id, head, current.status, landed, wanted)
    state.check = current


def create_check(state: PrState, journal: Journal, owner: str, repo: str, head: str,
                 fields: dict[str, Any]) -> Flow[int | None]:
    """A new run on the head (never with annotations: those go in journaled batches)."""
    previous = head_check(state, head)
    step = check_step(head)
    journal.intend(step, {"replaces": previous.id if previous else 0})
    body = {"name": CHECK_NAME, "head_sha": head,
            "external_id": external_id(owner, repo, head), **fields}
    call = check_call(owner, repo, None, body)
    result = yield call
    if result.status == 403:  # e.g. a personal token: only Apps may write check runs
        refused(state, "Check run", call.operation, result.status, result.message)
        return None
    if not result.ok:
        raise GitHubError(call, result)
    check_id = int(result.data["id"])
    journal.record(step, {"id": check_id, "status": str(fields.get("status") or "queued")})
    if previous is not None and previous.status != "completed":
        # The old run can never finish now: close it rather than leave it spinning.
        done = yield check_call(owner, repo, previous.id, SUPERSEDED)
        if not done.ok and done.status not in {403, 404}:
            raise GitHubError(check_call(owner, repo, previous.id, SUPERSEDED), done)
    return check_id


def write_check(state: PrState, journal: Journal, owner: str, repo: str, head: str,
                fields: dict[str, Any], reuse: bool) -> Flow[int | None]:
    """Update the head's run when `reuse`, else (or if it is gone) create one."""
    current = head_check(state, head)
    if reuse and current is not None:
        call = check_call(owner, repo, current.id, fields)
        result = yield call
        if result.ok:
            return current.id
        if result.status == 403:
            refused(state, "Check run", call.operation, result.status, result.message)
            return None
        if result.status != 404:
            raise GitHubError(call, result)
        state.check = None  # deleted (or another installation's): start afresh
    return (yield from create_check(state, journal, owner, repo, head, fields))


def send_annotations(state: PrState, journal: Journal, owner: str, repo: str,
                     check_id: int, output: dict[str, Any], batches: list[list[Any]],
                     key: str, first: dict[str, Any] | None = None) -> Flow[int]:
    """Append the batches not yet on the run; `first` (fields of the completing
    update) rides with the first batch sent, or alone if none is left. Returns how
    many annotations the run holds."""
    current = state.check if state.check and state.check.id == check_id else None
    already = current.annotations if current and current.annotations_digest == key else 0
    total = sum(len(b) for b in batches)
    step = annotations_step(check_id)
    if already < total:
        journal.intend(step, {"digest": key, "count": total})
    sent = 0
    for batch in batches:
        if sent + len(batch) <= already:
            sent += len(batch)
            continue
        body = {**(first or {}), "output": {**output, "annotations": batch}}
        first = None
        call = check_call(owner, repo, check_id, body)
        result = yield call
        if not result.ok:
            raise GitHubError(call, result)
        sent += len(batch)
        journal.record(step, {"digest": key, "sent": sent})
    if first is not None:
        call = check_call(owner, repo, check_id, first)
        result = yield call
        if not result.ok:
            raise GitHubError(call, result)
    return total


def close_superseded(owner: str, repo: str, head: str, prior_state: dict[str, Any] | None,
                     journal: Journal) -> Flow[dict[str, Any]]:
    """A review overtaken by a newer push publishes nothing; its in_progress run (if
    it started one) is closed as superseded rather than left spinning."""
    state = PrState.from_dict(prior_state)
    yield from reconcile_check(state, journal, owner, repo, head)
    current = head_check(state, head)
    if current is not None and current.status != "completed":
        result = yield check_call(owner, repo, current.id, SUPERSEDED)
        if not result.ok and result.status not in {403, 404}:
            raise GitHubError(check_call(owner, repo, current.id, SUPERSEDED), result)
        state.check = CheckRef(current.id, head, "completed", current.annotations,
                               current.annotations_digest)
    return state.to_dict()
