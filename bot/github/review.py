"""THE review pipeline: one review of one pull request over the API.

The App's worker (`bot/app/review_job.py`) and `ci-stability review --github` both run
`review_pull_request`; only what they hand in differs (rules, waivers, hooks, the
checkpoint that persists the in-progress check).

Order: the PR and the config (default branch) → draft policy → the inputs digest,
compared with the known state (the caller's stored state first, GitHub's only if
that is not enough) → the in_progress check (checkpointed) → snapshot → engine →
decorate/enrich hooks → publish. A redelivered webhook for an unchanged head
therefore costs two reads and no writes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import bot
from bot.core.config import CONFIG_PATH, Config, ConfigError, parse_config
from bot.core.engine import review
from bot.core.limits import DEFAULT_LIMITS, ReviewLimits, effective_limits
from bot.core.report import FileError, Report, Waiver
from bot.core.rule import Rule
from bot.core.snapshot import PullRequestSnapshot
from bot.core.surfaces import classify, surface_table
from bot.github.api_view import with_repo_context
from bot.github.calls import Flow
from bot.github.check_run import close_superseded
from bot.github.journal import Journal, MemoryJournal
from bot.github.pr_state import PrState
from bot.github.publish import publish, start_check
from bot.github.pull import fetch_config, fetch_snapshot_and_config, get_pull
from bot.github.recovery import known_state
from bot.render.review import MAX_COMMENTS
from bot.sources.files import MAX_TEXT_BYTES

Decorate = Callable[[Report, PullRequestSnapshot], Report]
# Persists the state the moment the in_progress check exists, so a worker killed
# mid-review completes that same check run on restart instead of leaving it spinning.
Checkpoint = Callable[[dict[str, Any]], None]
# Like Decorate, but may call GitHub (e.g. to look for duplicate PRs): a flow.
Enrich = Callable[[Report, PullRequestSnapshot], Flow[Report]]


@dataclass(frozen=True)
class ReviewRequest:
    owner: str
    repo: str
    number: int
    rules: Sequence[Rule]  # the caller's rule pack (the flows never import `rules`)
    # Rule id -> option defaults, to validate the config; None: those of `rules`.
    option_specs: Mapping[str, Mapping[str, Any]] | None = None
    bot_login: str = ""  # the account that publishes (App: "<slug>[bot]"); needed to publish
    waivers: Sequence[Waiver] = ()
    # Anything else that shapes the report (e.g. the failure index's version), so that
    # a change to it is not mistaken for "nothing changed".
    extra_digest: str = ""
    decorate: Decorate | None = None  # attaches sections (prior failing runs) to the report
    enrich: Enrich | None = None  # runs after decorate, with API access (duplicate work)
    publish: bool = True
    force: bool = False  # review and publish even when nothing changed
    early_check: bool = True  # show an in_progress check while reviewing (off for the CLI)
    skip_drafts: bool = False  # honour the config's `review_drafts: false` for draft PRs
    checkpoint: Checkpoint | None = None
    config_text: str | None = None  # use this instead of the default branch's config
    pull: dict[str, Any] | None = None  # the PR as already fetched by the caller
    text_cap: int = MAX_TEXT_BYTES
    # The ceiling on what one review reads (the operator's); the config may lower it.
    limits: ReviewLimits = DEFAULT_LIMITS
    max_comments: int = MAX_COMMENTS
    buttons: bool = True  # the check's Re-run button: only the App can act on it
    check_only: bool = False  # publish the check run alone (the Action's `check` reporter)
    # Where each write's intent and result go (the App: its store), so a run after a
    # crash takes in what landed instead of writing it again; None: in memory.
    journal: Journal | None = None
    # Asked just before publishing: True when a newer push of the PR is queued (or
    # already reviewed), so this review, which may have read a mix of the old head
    # and the new, publishes nothing and leaves the PR to the newer one.
    superseded: Callable[[], bool] | None = None


@dataclass(frozen=True)
class ReviewOutcome:
    state: dict[str, Any] | None  # persist it (store.put_pr_state); None when not publishing
    config: Config
    report: Report | None = None  # None when skipped
    snapshot: PullRequestSnapshot | None = None
    skipped: bool = False  # nothing reviewed: see `skip_reason`
    # "unchanged" (inputs as last published), "draft", or "superseded" (a newer push)
    skip_reason: str = ""

    @property
    def notes(self) -> list[str]:
        return list((self.state or {}).get("notes") or [])


def load_config(text: str | None, specs: Mapping[str, Mapping[str, Any]]
                ) -> tuple[Config, str | None]:
    """The config, or the defaults plus the reason the file was ignored."""
    if text is None:
        return Config(), None
    try:
        return parse_config(text, specs, source=CONFIG_PATH), None
    except ConfigError as exc:
        return Config(), f"ignored, the defaults apply: {exc}"


def inputs_digest(pull: dict[str, Any], config_text: str | None, request: ReviewRequest
                  ) -> str:
    waivers = [dataclasses.astuple(w) for w in request.waivers]
    labels = sorted(str(label.get("name")) for label in pull.get("labels") or [])
    parts = [
        bot.__version__, pull["head"]["sha"], pull["base"]["sha"], pull.get("title") or "",
        pull.get("body") or "", labels, config_text, waivers, [r.id for r in request.rules],
        request.extra_digest,
    ]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:32]


def unchanged(state: dict[str, Any], key: str, head: str) -> bool:
    """True when the last published review had exactly these inputs at this head."""
    known = PrState.from_dict(state)
    return (known.inputs_digest == key and known.head_sha == head
            and known.check is not None and known.check.status == "completed")


def in_scope(config: Config) -> Callable[[str], bool]:
    table = surface_table(config.surfaces)
    return lambda path: classify(path, table) is not None


def could_be_unchanged(state: dict[str, Any] | None, head: str) -> bool:
    """Whether `unchanged` can hold at this head whatever the config says: if not, the
    config need not be read before the review and comes with the file texts instead."""
    if not state:
        return False
    known = PrState.from_dict(state)
    return known.head_sha == head and known.check is not None and known.check.status == (
        "completed")


def evaluate(snapshot: PullRequestSnapshot, config: Config, problem: str | None,
             request: ReviewRequest) -> Flow[Report]:
    # The App's repository view may be asked what it does not hold yet: it is filled
    # (budgeted) and the engine runs again; hooks run once, on the final report.
    limits, over = effective_limits(config.limits, request.limits)
    report = yield from with_repo_context(snapshot.repo_view, lambda: review(
        snapshot, config, request.rules, request.waivers, limits))
    if over:
        report = dataclasses.replace(
            report, errors=(*report.errors, FileError(CONFIG_PATH, over)))
    if problem:
        report = dataclasses.replace(
            report, errors=(*report.errors, FileError(CONFIG_PATH, problem))
        )
    return request.decorate(report, snapshot) if request.decorate else report


def review_pull_request(
    request: ReviewRequest, prior_state: dict[str, Any] | None
) -> Flow[ReviewOutcome]:
    """Fetch, review and (if `request.publish`) publish; returns the state to persist."""
    owner, repo, number = request.owner, request.repo, request.number
    pull = request.pull if request.pull is not None else (
        yield from get_pull(owner, repo, number))
    head = pull["head"]["sha"]
    default_branch = pull["base"]["repo"]["default_branch"]
    specs = request.option_specs
    if specs is None:
        specs = {rule.id: rule.options for rule in request.rules}
    # The config is read now only where a decision before the review needs it (drafts,
    # "unchanged?"); otherwise it comes in the query for the file texts, one call less.
    config_text = request.config_text
    read = config_text is not None
    if not read and ((request.skip_drafts and pull.get("draft")) or (not request.force
                     and request.publish and could_be_unchanged(prior_state, head))):
        config_text, read = (yield from fetch_config(owner, repo, default_branch)), True
    config, problem = load_config(config_text, specs)
    if read and request.skip_drafts and pull.get("draft") and not config.review_drafts:
        return ReviewOutcome(None, config, skipped=True, skip_reason="draft")
    state = prior_state
    if request.publish:
        if not request.bot_login:
            raise ValueError("publishing needs the bot's login")
        # The caller's stored state answers "unchanged?" without a call to GitHub.
        if read and not request.force and state and unchanged(
                state, inputs_digest(pull, config_text, request), head):
            return ReviewOutcome(state, config, skipped=True, skip_reason="unchanged")
        known = yield from known_state(owner, repo, number, request.bot_login, state)
        state = known.to_dict()
        if not request.force and could_be_unchanged(state, head):
            if not read:
                config_text, read = (yield from fetch_config(owner, repo, default_branch)), True
                config, problem = load_config(config_text, specs)
            if unchanged(state, inputs_digest(pull, config_text, request), head):
                return ReviewOutcome(state, config, skipped=True, skip_reason="unchanged")
        if request.early_check:
            state = yield from start_check(owner, repo, head, state, request.journal)
            if request.checkpoint is not None:
                request.checkpoint(state)
    # A config read with the texts may add surfaces: `rescope` fetches those files too.
    snapshot, fetched = yield from fetch_snapshot_and_config(
        owner, repo, number, wants_contents=in_scope(config), text_cap=request.text_cap,
        pull=pull, config_ref=None if read else default_branch,
        limits=effective_limits(config.limits, request.limits)[0],
        rescope=lambda text: in_scope(load_config(text, specs)[0]),
    )
    if not read:
        config_text = fetched
        config, problem = load_config(config_text, specs)
    key = inputs_digest(pull, config_text, request)
    report = yield from evaluate(snapshot, config, problem, request)
    if request.enrich is not None:
        report = yield from request.enrich(report, snapshot)
    if request.publish and request.superseded is not None and request.superseded():
        state = yield from close_superseded(owner, repo, head, state,
                                            request.journal or MemoryJournal())
        return ReviewOutcome(state, config, skipped=True, skip_reason="superseded")
    if request.publish:
        state = yield from publish(
            report, snapshot, owner, repo, state, request.bot_login, request.waivers,
            inputs_digest=key, max_comments=request.max_comments, buttons=request.buttons,
            check_only=request.check_only, journal=request.journal,
            superseded=request.superseded,
        )
    return ReviewOutcome(state, config, report, snapshot)
