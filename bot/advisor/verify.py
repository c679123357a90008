"""Check and defuse the model's answer before anyone sees it (pure).

The answer is plain advisory text. Every quoted line (a `> ` line, or a code span of
some length) must exist in the inputs the model was given; one that does not is
dropped, and the reader is told how many were. Mentions and raw HTML are neutralised
(`mdsafe.text`), slash commands broken up, headings flattened, images removed, and
links kept only when they point into the repository, at one of its CI hosts, or at a
URL that was in the inputs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.advisor.prompt import Prompt, normalise
from bot.render import mdsafe

MAX_ANSWER_CHARS = 2_500
MIN_PARTIAL_QUOTE = 16  # a quote shorter than a whole line must be at least this long
MIN_CODE_QUOTE = 12  # shorter code spans are names (`PYTORCH_CUDA_ALLOC_CONF`), checked too
_QUOTE = re.compile(r"^\s*>+\s?(.*)$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)[^)]*\)")
_URL = re.compile(r"\b(?:https?|ftp|file|javascript|data):[^\s<>()\[\]`]+", re.I)
_COMMAND = re.compile(r"/(?=stability\b)", re.I)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")


@dataclass(frozen=True)
class Links:
    """Where a link in the answer may point."""

    repo: str | None  # "owner/name": https://github.com/owner/name/...
    ci_hosts: frozenset[str]  # e.g. buildkite.com, from the runs in the inputs
    urls: frozenset[str]  # exact URLs that were in the inputs

    @classmethod
    def for_prompt(cls, repo: str | None, prompt: Prompt, extra_hosts: Iterable[str] = ()
                   ) -> Links:
        hosts = {urlsplit(u).hostname or "" for u in prompt.urls()} | set(extra_hosts)
        hosts.discard("")
        hosts.discard("github.com")  # github.com only under the repository, below
        return cls(repo, frozenset(h.lower() for h in hosts), prompt.urls())

    def allowed(self, url: str) -> bool:
        if url in self.urls:
            return True
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname:
            return False
        host = parts.hostname.lower()
        if host == "github.com":
            return bool(self.repo) and parts.path.lower().startswith(
                f"/{(self.repo or '').lower()}/")
        return host in self.ci_hosts


@dataclass(frozen=True)
class Verified:
    text: str
    kept_quotes: int
    dropped_quotes: int
    dropped_refs: int = 0  # lines naming a pull request that was not in the inputs

    @property
    def note(self) -> str:
        notes = []
        if self.dropped_quotes:
            n = self.dropped_quotes
            notes.append(f"{n} quoted line{'s' if n != 1 else ''} dropped: not found in the "
                         "inputs the model was given.")
        if self.dropped_refs:
            n = self.dropped_refs
            notes.append(f"{n} line{'s' if n != 1 else ''} dropped: naming a pull request "
                         "that was not among the inputs.")
        return " ".join(notes)


def _quoted_ok(quote: str, inputs: frozenset[str], joined: str) -> bool:
    line = normalise(quote)
    if not line:
        return True
    if line in inputs:
        return True
    return len(line) >= MIN_PARTIAL_QUOTE and line in joined


def _links(line: str, links: Links) -> str:
    line = _IMAGE.sub("", line)

    def md_link(match: re.Match[str]) -> str:
        label, url = match.group(1), match.group(2)
        return f"[{label}]({url})" if links.allowed(url) else label

    line = _MD_LINK.sub(md_link, line)
    # Bare URLs outside the kept Markdown links.
    kept = {m.group(2) for m in _MD_LINK.finditer(line)}

    def bare(match: re.Match[str]) -> str:
        url = match.group(0).rstrip(".,;:!?'\"")
        tail = match.group(0)[len(url):]
        return match.group(0) if url in kept or links.allowed(url) else "[link removed]" + tail

    return _URL.sub(bare, line)


def _defuse(line: str) -> str:
    line = _HEADING.sub("", line)
    line = _COMMAND.sub("/\u200b", line)
    return mdsafe.text(line)


def verify(answer: str, prompt: Prompt, links: Links) -> Verified:
    """The answer with unverifiable quotes dropped and everything else made inert."""
    text = (answer or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    if len(text) > MAX_ANSWER_CHARS:
        text = text[:MAX_ANSWER_CHARS].rsplit(" ", 1)[0] + " …"
    inputs = prompt.quotable()
    joined = "\n".join(sorted(inputs))
    kept = dropped = 0
    out: list[str] = []
    for line in text.split("\n"):
        quote = _QUOTE.match(line)
        if quote is not None:
            body = quote.group(1)
            if body.startswith("| "):
                body = body[2:]  # the model copied our data prefix too
            if _quoted_ok(body, inputs, joined):
                kept += bool(normalise(body))
                out.append("> " + _defuse(_links(body, links)))
            else:
                dropped += 1
            continue

        def span(match: re.Match[str]) -> str:
            nonlocal kept, dropped
            inner = match.group(2).strip()
            if len(inner) < MIN_CODE_QUOTE or normalise(inner) in joined:
                return match.group(0)
            dropped += 1
            return "[unverified quote removed]"

        line = _CODE_SPAN.sub(span, line)
        out.append(_defuse(_links(line, links)))
    cleaned = "\n".join(out).strip()
    return Verified(cleaned, kept, dropped)
