"""A limit named by the failure it produces: "fix … startup timeouts" is the reason a
`wait_server_timeout` was raised.

A timeout knob says in its name what it bounds (`wait_server_timeout`,
`download_timeout`, `NCCL_TIMEOUT`), and a PR that raises it often names it only by
the failure it produces: "fix ATOMesh online quant logs and startup timeouts", "avoid
download timeouts on the new runners". That sentence says why the limit moved (the
old one was hit by work the PR says is legitimate) in the words of the failure, not of
the knob, so the knob readers' "names the knob" test misses it. Only a knob whose name
carries a phase word is matched, and only by a sentence that says it fixes (resolves,
avoids, …) a timeout of that phase: a bare job limit (`timeout-minutes`) raised "to fix
CI timeouts" says nothing about what got slower, and stays asked about.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rules.analysis.prtext import prose_sentences

# What a limit bounds, by the words of its name and of a failure sentence.
_PHASES: dict[str, str] = {
    "startup": r"server|servers|serving|startup|start|starting|started|start-up|launch\w*|"
               r"boot\w*|ready|readiness|init|initiali[sz]\w*|health\w*|warm-?up|spawn\w*",
    "download": r"download\w*|fetch\w*|pull\w*|clone\w*",
    "connect": r"connect\w*|rdzv|rendezvous|handshake\w*|barrier|nccl|hccl|collective\w*",
    "compile": r"compil\w*|jit|build\w*",
    "request": r"requests?|responses?|http|api",
}
_PHASE_RES = {phase: re.compile(rf"^(?:{words})$", re.I) for phase, words in _PHASES.items()}
_FAILURE_RE = re.compile(r"\b(?:timeouts?|time-outs?|timed? ?out|timing ?out)\b", re.I)
_FIX_RE = re.compile(r"\b(?:fix\w*|resolv\w*|address\w*|avoid\w*|prevent\w*|mitigat\w*|"
                     r"handl\w*|work(?:s|ed|ing)? ?around)\b", re.I)
_WORD_RE = re.compile(r"[A-Za-z][\w-]*")
_BULLET_RE = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
# Words before the failure word ("server start timeouts") and after it ("timed out
# waiting for the server") that may name its phase.
_BEFORE, _AFTER = 2, 5
_MAX_SENTENCE = 1_000
_MAX_SENTENCES = 2_000


def phases(name: str) -> frozenset[str]:
    """The phases a limit's (normalized, `-`-joined) name says it bounds."""
    words = [w for w in re.split(r"[-_\s.]+", name.lower()) if w]
    return frozenset(phase for phase, pattern in _PHASE_RES.items()
                     if any(pattern.match(w) for w in words))


def fixes_limit_failure(text: str, name: str) -> str | None:
    """The sentence of the PR text that says it fixes a timeout of the phase the limit
    `name` bounds ("fix … startup timeouts" for `wait-server-timeout`), if any."""
    wanted = phases(name)
    if not wanted or not text or _FAILURE_RE.search(text[:200_000]) is None:
        return None
    for sentence, named in _failures(text[:200_000]):
        if named & wanted:
            return sentence if len(sentence) <= 200 else sentence[:197] + "..."
    return None


@lru_cache(maxsize=8)
def _failures(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """(sentence, the phases of the timeouts it says it fixes), once per description."""
    out: list[tuple[str, frozenset[str]]] = []
    for sentence in prose_sentences(text)[:_MAX_SENTENCES]:
        if len(sentence) > _MAX_SENTENCE or _FIX_RE.search(sentence) is None:
            continue
        words = [m.group(0) for m in _WORD_RE.finditer(sentence)]
        named: set[str] = set()
        for at, word in enumerate(words):
            # "startup timeouts", "timed out waiting for the server": the words around.
            if _FAILURE_RE.fullmatch(word) is None and not (
                    word.lower() in ("timed", "timing") and at + 1 < len(words)
                    and words[at + 1].lower() == "out"):
                continue
            for near in words[max(0, at - _BEFORE): at + _AFTER + 1]:
                named |= {p for p, pattern in _PHASE_RES.items() if pattern.match(near)}
        if named:
            out.append((_BULLET_RE.sub("", sentence), frozenset(named)))
    return tuple(out)
