"""Check runs (written by the bot) and Actions runs, jobs and logs (read for evidence)."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from .context import Ctx, Handler
from .errors import Reply, not_found, unprocessable
from .search_query import date_predicate
from .shapes import HTML, iso, node_id
from .state import CheckRun, Job, WorkflowRun

LOG_LINK_LIFETIME = timedelta(minutes=1)
LOG_BLOB_PREFIX = "/_fake/blobs/job-logs/"


def _parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _check_annotations(annotations: list[dict[str, Any]]) -> None:
    for note in annotations:
        if note["end_line"] < note["start_line"]:
            raise unprocessable("Invalid request.\n\nend_line must be >= start_line.")
        has_columns = "start_column" in note or "end_column" in note
        if has_columns and note["start_line"] != note["end_line"]:
            raise unprocessable(
                "Invalid request.\n\nstart_column and end_column are only allowed when "
                "start_line and end_line are the same."
            )


def _apply(ctx: Ctx, run: CheckRun) -> None:
    """Fields common to create and update; annotations accumulate across calls."""
    body = ctx.body
    if "completed_at" in body and "conclusion" not in body and run.conclusion is None:
        raise unprocessable("Invalid request.\n\n`conclusion` is required with `completed_at`.")
    for key in ("name", "details_url", "external_id"):
        if key in body:
            setattr(run, key, body[key])
    if "started_at" in body:
        run.started_at = _parse_time(body["started_at"]) or run.started_at
    if "status" in body:
        run.status = body["status"]
        if run.status != "completed" and "conclusion" not in body:
            # A finished run set back to in_progress (a re-run) is unfinished again.
            run.conclusion, run.completed_at = None, None
    if "conclusion" in body:
        # GitHub: providing a conclusion sets the status to completed.
        run.conclusion, run.status = body["conclusion"], "completed"
    if run.status == "completed":
        run.completed_at = _parse_time(body.get("completed_at")) or run.completed_at or ctx.now
    if "output" in body:
        output = body["output"]
        annotations = output.get("annotations", [])
        _check_annotations(annotations)
        for key in ("title", "summary", "text"):
            if key in output:
                run.output[key] = output[key]
        run.annotations.extend(annotations)
    if "actions" in body:
        run.actions = list(body["actions"])


def create_check_run(ctx: Ctx) -> Reply:
    head_sha = ctx.body["head_sha"]
    if not ctx.state.knows_commit(ctx.full_name, head_sha):
        raise unprocessable("No commit found for SHA: " + head_sha)
    suite_key = (ctx.full_name, head_sha)
    if suite_key not in ctx.state.check_suites:
        ctx.state.check_suites[suite_key] = ctx.state.ids.next("check_suite")
    run = CheckRun(
        id=ctx.state.ids.next("check_run"), repo=ctx.full_name, name=ctx.body["name"],
        head_sha=head_sha, status="queued", check_suite_id=ctx.state.check_suites[suite_key],
        started_at=ctx.now,
    )
    _apply(ctx, run)
    ctx.state.check_runs[run.id] = run
    return Reply(status=201, json=ctx.shapes.check_run(run))


def update_check_run(ctx: Ctx) -> Reply:
    run = ctx.state.check_runs.get(ctx.int_param("check_run_id"))
    if run is None or run.repo != ctx.full_name:
        raise not_found()
    _apply(ctx, run)
    run.patch_count += 1
    return Reply(json=ctx.shapes.check_run(run))


def _ref_sha(ctx: Ctx, ref: str) -> str:
    """A commit SHA as is, else the head of a branch some PR of the repo is built from."""
    if ctx.state.knows_commit(ctx.full_name, ref):
        return ref
    branch = ref.removeprefix("refs/heads/").removeprefix("heads/")
    for pr in ctx.state.pulls.values():
        if pr.repo == ctx.full_name and pr.head_repo is None and pr.head_ref == branch:
            return pr.head_sha
    raise unprocessable(f"No commit found for SHA: {ref}")


def list_check_runs_for_ref(ctx: Ctx) -> Reply:
    """GitHub's `GET /commits/{ref}/check-runs`: newest first; `filter=latest` (the
    default) keeps only the most recent run of each name, `all` keeps every one."""
    sha = _ref_sha(ctx, ctx.params["ref"])
    q = ctx.query
    runs = sorted((r for r in ctx.state.check_runs.values()
                   if r.repo == ctx.full_name and r.head_sha == sha
                   and q.get("check_name") in {None, r.name}
                   and q.get("status") in {None, r.status}), key=lambda r: r.id, reverse=True)
    if q.get("filter", "latest") == "latest":
        seen: set[str] = set()
        runs = [r for r in runs if not (r.name in seen or seen.add(r.name))]
    return ctx.paged_reply(runs, ctx.shapes.check_run, "check_runs")


def _run_json(ctx: Ctx, run: WorkflowRun) -> dict[str, Any]:
    api = ctx.shapes.repo_api(run.repo)
    url = f"{api}/actions/runs/{run.id}"
    repo = ctx.shapes.repo(ctx.state.repos[run.repo])
    prs = [] if ctx.query.get("exclude_pull_requests") else [
        {"id": pr.id, "number": pr.number, "url": f"{api}/pulls/{pr.number}",
         "head": {"ref": pr.head_ref, "sha": pr.head_sha, "repo": {"id": repo["id"],
                  "url": api, "name": repo["name"]}},
         "base": {"ref": pr.base_ref, "sha": pr.base_sha, "repo": {"id": repo["id"],
                  "url": api, "name": repo["name"]}}}
        for number in run.pull_requests
        if (pr := ctx.state.pulls.get((run.repo, number))) is not None
    ]
    person = {"name": run.actor, "email": f"{run.actor}@example.com"}
    return {
        "id": run.id, "name": run.name, "node_id": node_id("WorkflowRun", run.id),
        "check_suite_id": run.check_suite_id, "head_branch": run.head_branch,
        "head_sha": run.head_sha, "path": run.path, "run_number": run.run_number,
        "run_attempt": run.run_attempt, "event": run.event,
        "display_title": run.display_title or run.name, "status": run.status,
        "conclusion": run.conclusion, "workflow_id": run.workflow_id, "url": url,
        "html_url": f"{HTML}/{run.repo}/actions/runs/{run.id}", "pull_requests": prs,
        "created_at": iso(run.created_at), "updated_at": iso(run.updated_at),
        "run_started_at": iso(run.created_at), "actor": ctx.shapes.user(run.actor),
        "triggering_actor": ctx.shapes.user(run.actor), "jobs_url": f"{url}/jobs",
        "logs_url": f"{url}/logs", "check_suite_url": f"{api}/check-suites/{run.check_suite_id}",
        "artifacts_url": f"{url}/artifacts", "cancel_url": f"{url}/cancel",
        "rerun_url": f"{url}/rerun", "previous_attempt_url": None,
        "workflow_url": f"{api}/actions/workflows/{run.workflow_id}",
        "head_commit": {"id": run.head_sha, "tree_id": run.head_sha, "message": run.display_title,
                        "timestamp": iso(run.created_at), "author": person, "committer": person},
        "repository": repo, "head_repository": repo,
    }


def _filtered_runs(ctx: Ctx, workflow: str | None) -> list[WorkflowRun]:
    q = ctx.query
    created = date_predicate(str(q["created"])) if "created" in q else None
    runs = [
        run for run in ctx.state.runs.values()
        if run.repo == ctx.full_name
        and (workflow is None or workflow in {str(run.workflow_id), run.path.rsplit("/", 1)[-1]})
        and q.get("actor") in {None, run.actor} and q.get("branch") in {None, run.head_branch}
        and q.get("event") in {None, run.event} and q.get("head_sha") in {None, run.head_sha}
        and q.get("status") in {None, run.status, run.conclusion}
        and q.get("check_suite_id") in {None, run.check_suite_id}
        and (created is None or created(run.created_at))
    ]
    return sorted(runs, key=lambda r: (r.created_at, r.id), reverse=True)


def list_runs_for_repo(ctx: Ctx) -> Reply:
    return ctx.paged_reply(_filtered_runs(ctx, None), lambda r: _run_json(ctx, r), "workflow_runs")


def list_runs_for_workflow(ctx: Ctx) -> Reply:
    workflow = ctx.params["workflow_id"]
    known = {
        key for r in ctx.state.runs.values() if r.repo == ctx.full_name
        for key in (str(r.workflow_id), r.path.rsplit("/", 1)[-1])
    }
    if workflow not in known:
        raise not_found()
    return ctx.paged_reply(
        _filtered_runs(ctx, workflow), lambda r: _run_json(ctx, r), "workflow_runs"
    )


def _job_json(ctx: Ctx, job: Job) -> dict[str, Any]:
    run = ctx.state.runs[job.run_id]
    api = ctx.shapes.repo_api(job.repo)
    return {
        "id": job.id, "run_id": job.run_id, "run_url": f"{api}/actions/runs/{job.run_id}",
        "run_attempt": job.run_attempt, "node_id": node_id("CheckRun", job.id),
        "head_sha": run.head_sha, "url": f"{api}/actions/jobs/{job.id}",
        "html_url": f"{HTML}/{job.repo}/actions/runs/{job.run_id}/job/{job.id}",
        "status": job.status, "conclusion": job.conclusion, "created_at": iso(job.started_at),
        "started_at": iso(job.started_at), "completed_at": iso(job.completed_at),
        "name": job.name, "steps": job.steps, "check_run_url": f"{api}/check-runs/{job.id}",
        "labels": job.labels, "runner_id": 1 if job.runner_name else None,
        "runner_name": job.runner_name, "runner_group_id": 1 if job.runner_name else None,
        "runner_group_name": "GitHub Actions" if job.runner_name else None,
        "workflow_name": run.name, "head_branch": run.head_branch,
    }


def list_jobs(ctx: Ctx) -> Reply:
    run = ctx.state.runs.get(ctx.int_param("run_id"))
    if run is None or run.repo != ctx.full_name:
        raise not_found()
    jobs = sorted((j for j in ctx.state.jobs.values() if j.run_id == run.id), key=lambda j: j.id)
    if ctx.query.get("filter", "latest") == "latest" and jobs:
        latest = max(j.run_attempt for j in jobs)
        jobs = [j for j in jobs if j.run_attempt == latest]
    return ctx.paged_reply(jobs, lambda j: _job_json(ctx, j), "jobs")


def download_job_logs(ctx: Ctx) -> Reply:
    job = ctx.state.jobs.get(ctx.int_param("job_id"))
    if job is None or job.repo != ctx.full_name or job.log is None:
        raise not_found()
    token = secrets.token_urlsafe(16)
    ctx.state.log_links[token] = (job.id, ctx.now + LOG_LINK_LIFETIME)
    # Like github.com: a short-lived, pre-signed link elsewhere that needs no token.
    return Reply(status=302, headers={"Location": f"{ctx.base_url}{LOG_BLOB_PREFIX}{token}"})


HANDLERS: dict[str, Handler] = {
    "checks/create": create_check_run,
    "checks/update": update_check_run,
    "checks/list-for-ref": list_check_runs_for_ref,
    "actions/list-workflow-runs-for-repo": list_runs_for_repo,
    "actions/list-workflow-runs": list_runs_for_workflow,
    "actions/list-jobs-for-workflow-run": list_jobs,
    "actions/download-job-logs-for-workflow-run": download_job_logs,
}
