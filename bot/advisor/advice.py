"""From evidence to prompt, and from answer to what a reader sees (pure).

The App and the CLI do the I/O (the index query, the model call); everything between
lives here: which inputs, the prompt, the verification, the Markdown, the notes.
Advisory text is only ever added beside the findings: nothing here can touch a finding,
the conclusion, a label or a command.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence, Set
from dataclasses import dataclass

from bot.advisor.client import Answer
from bot.advisor.inputs import (
    description_block,
    duplicate_blocks,
    finding_blocks,
    hunk_blocks,
    run_blocks,
)
from bot.advisor.prompt import DEDUP_TASK, EXPLAIN_TASK, Prompt, build
from bot.advisor.verify import Links, Verified, verify
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.duplicates import DuplicateReport
from bot.evidence.relevance import RelatedFailure
from bot.render import mdsafe

SECTION_TITLE = "Advisor"
CHECK_TITLE = "Advisor usage"
_NUMBER = re.compile(r"(?<![\w&])#(\d{1,7})\b")
DISCLAIMER = ("advisory text from a language model, with its quotes checked against the "
              "inputs; it changes no finding and no conclusion")


@dataclass(frozen=True)
class Advice:
    verified: Verified
    answer: Answer
    prompt: Prompt
    model: str

    def usage(self) -> str:
        how = " (estimated: the server reported none)" if self.answer.estimated else ""
        return (f"{self.answer.tokens:,} tokens (prompt {self.answer.prompt_tokens:,} + "
                f"completion {self.answer.completion_tokens:,}){how} from "
                f"{mdsafe.code(self.model)} in {self.answer.seconds:.1f} s")

    def footnote(self) -> str:
        parts = [f"Inputs: {mdsafe.text(self.prompt.usage_note)}."]
        if self.verified.note:
            parts.append(self.verified.note)
        return " ".join(parts)


def explain_prompt(report: Report, snapshot: PullRequestSnapshot,
                   related: Sequence[RelatedFailure], budget: int) -> Prompt:
    blocks = [description_block(snapshot), *finding_blocks(report), *run_blocks(related),
              *hunk_blocks(snapshot)]
    question = ("Explain the likely root cause of the prior failing CI runs below, and "
                "whether the changed hunks of this pull request address it.")
    return build(EXPLAIN_TASK, blocks, budget, question)


def dedup_prompt(snapshot: PullRequestSnapshot, duplicates: DuplicateReport,
                 budget: int) -> Prompt:
    blocks = [description_block(snapshot), *duplicate_blocks(duplicates),
              *hunk_blocks(snapshot)]
    question = ("Draft the duplicate-work paragraph for this pull request's description, "
                "one line per other pull request listed.")
    return build(DEDUP_TASK, blocks, budget, question)


def finish(prompt: Prompt, answer: Answer, repo: str | None, model: str) -> Advice:
    links = Links.for_prompt(repo, prompt)
    return Advice(verify(answer.text, prompt, links), answer, prompt, model)


def only_numbers(advice: Advice, numbers: Set[int]) -> Advice:
    """Drop the draft's lines that name a pull request the inputs did not list."""
    kept: list[str] = []
    dropped = 0
    for line in advice.verified.text.split("\n"):
        if {int(n) for n in _NUMBER.findall(line)} - set(numbers):
            dropped += 1
            continue
        kept.append(line)
    verified = dataclasses.replace(advice.verified, text="\n".join(kept).strip(),
                                   dropped_refs=advice.verified.dropped_refs + dropped)
    return dataclasses.replace(advice, verified=verified)


def summary_section(advice: Advice) -> tuple[str, str]:
    """The collapsed section for the summary comment and the check run."""
    body = (f"<details><summary>Likely root cause of the prior failing runs "
            f"({DISCLAIMER})</summary>\n\n{advice.verified.text}\n\n"
            f"<sub>{advice.footnote()} {advice.usage()}.</sub>\n\n</details>\n")
    return SECTION_TITLE, body


def check_note(text: str) -> tuple[str, str]:
    """What the check run's details say about the advisor (tokens, or why it is absent)."""
    return CHECK_TITLE, text


def attach(report: Report, advice: Advice) -> Report:
    """`report` with the Advisor section, and the token count in the check's details."""
    return dataclasses.replace(
        report, sections=(*report.sections, summary_section(advice)),
        check_sections=(*report.check_sections, check_note(f"{advice.usage()}.")))


def without(report: Report, reason: str) -> Report:
    """`report` unchanged but for a check-run note saying why there is no Advisor section."""
    return dataclasses.replace(report, check_sections=(
        *report.check_sections, check_note(f"Advisor section not included: {reason}.")))


def reply(title: str, advice: Advice) -> str:
    """A comment answering `/stability explain-failure` or `draft-dedup-note`."""
    return (f"**{title}** ({DISCLAIMER})\n\n{advice.verified.text}\n\n"
            f"<sub>{advice.footnote()} {advice.usage()}.</sub>")


def dedup_reply(advice: Advice) -> str:
    """The draft inside a block the author can copy; the bot never edits the description."""
    return (f"**Draft for the description's duplicate-work section** ({DISCLAIMER}). "
            "Edit it and paste it into the description yourself; the bot never edits "
            f"descriptions.\n\n{mdsafe.fenced(advice.verified.text, 'markdown')}\n\n"
            f"<sub>{advice.footnote()} {advice.usage()}.</sub>")
