"""The advisor in the App: the review's Advisor section and the two slash commands.

The review pipeline is a flow of GitHub calls; the advisor's model request rides in
it as one more effect (`ADVISOR_OPERATION`), which `AdvisingDriver` answers with the
process's `Advisor` instead of GitHub. So the section is computed after the findings
and before publishing, inside the one pipeline, and any failure of the model (timeout,
429, 500, budget) only replaces the section with a note on the check run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from bot.advisor import advice as advising
from bot.advisor.client import AdvisorFailure, Answer
from bot.advisor.prompt import Prompt
from bot.advisor.runtime import Advisor
from bot.app.context import AppContext
from bot.app.evidence_hooks import failure_index
from bot.core.config import Config
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.duplicates import FilesCache, find_duplicates
from bot.evidence.lookup import prior_failing_runs
from bot.github.calls import ApiCall, ApiResult, Flow
from bot.github.drive_async import AsyncDriver, drive
from bot.github.pull import fetch_config, get_pull
from bot.github.review import ReviewRequest, load_config, review_pull_request
from rules import ALL_RULES, option_specs

log = logging.getLogger("bot.advisor")
ADVISOR_OPERATION = "advisor/chat-completions"
Enrich = Callable[[Report, PullRequestSnapshot], Flow[Report]]
T = TypeVar("T")
NOT_CONFIGURED = (
    "The advisor is not enabled here: it needs the operator's `CI_STABILITY_LLM_BASE_URL` "
    "and `CI_STABILITY_LLM_MODEL` and `advisor: true` in the default branch's "
    "`.github/ci-stability.yml`."
)


class AdvisingDriver:
    """Runs a flow on `driver`, answering the advisor's effect with `advisor`."""

    def __init__(self, driver: AsyncDriver, advisor: Advisor) -> None:
        self.driver = driver
        self.advisor = advisor

    async def _advise(self, call: ApiCall) -> ApiResult:
        pr, prompt = call.body
        try:
            answer = await self.advisor.ask(pr, prompt)
        except AdvisorFailure as exc:
            log.info("advisor gave no answer", extra={"pr": pr, "reason": exc.reason})
            return ApiResult(503, data=exc.reason)
        return ApiResult(200, data=answer)

    async def _answer(self, call: ApiCall) -> ApiResult:
        if call.operation == ADVISOR_OPERATION:
            return await self._advise(call)
        return await self.driver.call(call)

    async def run(self, flow: Flow[T]) -> T:
        return await drive(flow, self._answer, self.driver.steps)


def ask(pr: str, prompt: Prompt) -> Flow[Answer | str]:
    """The model's answer as a flow effect: an Answer, or the reason there is none."""
    result = yield ApiCall("POST", "advisor:", body=(pr, prompt), operation=ADVISOR_OPERATION)
    if isinstance(result.data, Answer):
        return result.data
    return str(result.data or f"the advisor did not answer ({result.status})")


def pr_key(snapshot: PullRequestSnapshot) -> str:
    return f"{snapshot.repo}#{snapshot.number}"


def advice_step(ctx: AppContext, advisor: Advisor) -> Enrich:
    """A `ReviewRequest.enrich` adding the Advisor section (or the note why not)."""
    index, now = failure_index(ctx), datetime.fromtimestamp(ctx.clock(), UTC)

    def enrich(report: Report, snapshot: PullRequestSnapshot) -> Flow[Report]:
        if not report.in_scope:
            return report
        related = prior_failing_runs(index, snapshot, now=now).related
        if not related:
            return advising.without(report, "no prior failing runs relate to this PR")
        prompt = advising.explain_prompt(report, snapshot, related,
                                         advisor.settings.prompt_tokens)
        answer = yield from ask(pr_key(snapshot), prompt)
        if isinstance(answer, str):
            return advising.without(report, answer)
        return advising.attach(report, advising.finish(
            prompt, answer, snapshot.repo, advisor.settings.model))

    return enrich


def chain(first: Enrich | None, second: Enrich) -> Enrich:
    def both(report: Report, snapshot: PullRequestSnapshot) -> Flow[Report]:
        if first is not None:
            report = yield from first(report, snapshot)
        return (yield from second(report, snapshot))

    return both


async def repo_config(driver: AsyncDriver, owner: str, repo: str, number: int
                      ) -> tuple[dict[str, Any], str | None, Config]:
    """The PR and the default branch's config, read once so the review can reuse them."""
    pull = await driver.run(get_pull(owner, repo, number))
    text = await driver.run(fetch_config(owner, repo, pull["base"]["repo"]["default_branch"]))
    return pull, text, load_config(text, option_specs())[0]


async def _reviewed(ctx: AppContext, installation: int, owner: str, repo: str, number: int
                    ) -> tuple[Advisor, AdvisingDriver, Report, PullRequestSnapshot] | str:
    """The unpublished review of the PR's head, or the reason the advisor is off."""
    advisor = ctx.advisor
    if advisor is None:
        return NOT_CONFIGURED
    driver = await ctx.driver(installation)
    pull, text, config = await repo_config(driver, owner, repo, number)
    if not config.advisor:
        return NOT_CONFIGURED
    request = ReviewRequest(owner, repo, number, rules=ALL_RULES, option_specs=option_specs(),
                            publish=False, early_check=False, pull=pull, config_text=text)
    outcome = await driver.run(review_pull_request(request, None))
    assert outcome.report is not None and outcome.snapshot is not None  # publish=False
    return advisor, AdvisingDriver(driver, advisor), outcome.report, outcome.snapshot


async def explain_failure_reply(ctx: AppContext, installation: int, owner: str, repo: str,
                                number: int) -> tuple[str, bool]:
    """`/stability explain-failure`: (reply, succeeded)."""
    reviewed = await _reviewed(ctx, installation, owner, repo, number)
    if isinstance(reviewed, str):
        return reviewed, False
    advisor, runner, report, snapshot = reviewed
    now = datetime.fromtimestamp(ctx.clock(), UTC)
    related = prior_failing_runs(failure_index(ctx), snapshot, now=now).related
    if not related:
        return ("No prior failing CI run in the index relates to this pull request's files, "
                "so there is no failure to explain (`/stability runs` lists what is known)."
                ), True
    prompt = advising.explain_prompt(report, snapshot, related, advisor.settings.prompt_tokens)
    answer = await runner.run(ask(pr_key(snapshot), prompt))
    if isinstance(answer, str):
        return f"The advisor could not answer: {answer}.", False
    advice = advising.finish(prompt, answer, snapshot.repo, advisor.settings.model)
    return advising.reply("Advisor: likely root cause of the prior failing runs", advice), True


async def dedup_note_reply(ctx: AppContext, installation: int, owner: str, repo: str,
                           number: int) -> tuple[str, bool]:
    """`/stability draft-dedup-note`: a draft for the author to paste, never an edit."""
    reviewed = await _reviewed(ctx, installation, owner, repo, number)
    if isinstance(reviewed, str):
        return reviewed, False
    advisor, runner, _report, snapshot = reviewed
    if ctx.files_cache is None:
        ctx.files_cache = FilesCache()
    now = datetime.fromtimestamp(ctx.clock(), UTC)
    related = prior_failing_runs(failure_index(ctx), snapshot, now=now).related
    jobs = sorted({r.job.job_name for r in related if r.job.job_name})
    duplicates = await runner.run(find_duplicates(snapshot, now=now, failing_jobs=jobs,
                                                  cache=ctx.files_cache))
    if not duplicates.items:
        return ("No open or recently merged pull request touches the same files or names "
                "the same failing job, so there is no duplicate-work note to draft."), True
    prompt = advising.dedup_prompt(snapshot, duplicates, advisor.settings.prompt_tokens)
    answer = await runner.run(ask(pr_key(snapshot), prompt))
    if isinstance(answer, str):
        return f"The advisor could not answer: {answer}.", False
    advice = advising.finish(prompt, answer, snapshot.repo, advisor.settings.model)
    numbers = {item.number for item in duplicates.items}
    return advising.dedup_reply(advising.only_numbers(advice, numbers)), True
