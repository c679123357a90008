"""What a root cause explains: the symptom lines after it and its own repeats.

A CI log rarely fails once. A CUDA OOM is followed by the server-start timeout it
caused, the pytest verdict, the harness wrapper and the step's exit code; a retry loop
prints the same error once per attempt before "failed after N attempts"; reruns print
one traceback several times. The extractor reports one root cause; `ChainTracker`
keeps, for the current best candidate, the distinct lower-ranked lines seen after it
(each once, with how often its pattern repeated) and the lines that repeat the cause
itself, all bounded so a log of any size costs the same.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_SYMPTOMS = 8
MAX_REPEAT_LINES = 20
SYMPTOM_MAX_CHARS = 300


@dataclass(frozen=True)
class Symptom:
    """A lower-ranked line the root cause explains (the first of its pattern)."""

    line_no: int
    category: str
    pattern_id: str
    line: str
    count: int = 1


@dataclass(frozen=True)
class Chain:
    symptoms: tuple[Symptom, ...]
    # Line numbers of every occurrence of the cause's signature, the cause included.
    occurrences: tuple[int, ...]
    occurrence_count: int

    def describe(self, category: str, line_no: int) -> str:
        """`server-start-timeout at line 812 ← cuda-oom at line 640 (3 times, last at line 700)`.

        Symptoms are named by their catalog pattern (`exit-code`, `pytest-summary`),
        which says more than their category; the cause by its category.
        """
        cause = f"{category} at line {line_no}"
        if self.occurrence_count > 1:
            cause += f" ({self.occurrence_count} times"
            cause += f", last at line {self.occurrences[-1]})" if self.occurrences else ")"
        if not self.symptoms:
            return cause
        symptoms = [f"{s.pattern_id} at line {s.line_no}" for s in reversed(self.symptoms)]
        return " ← ".join([*symptoms, cause])


NO_CHAIN = Chain((), (), 1)


class ChainTracker:
    """Collects the chain of the current best candidate; `restart` when a new one wins."""

    def __init__(self) -> None:
        self._symptoms: dict[str, Symptom] = {}
        self._occurrences: list[int] = []
        self._count = 0

    def restart(self, line_no: int) -> None:
        self._symptoms = {}
        self._occurrences = [line_no]
        self._count = 1

    def repeat(self, line_no: int) -> None:
        self._count += 1
        if len(self._occurrences) >= MAX_REPEAT_LINES:
            self._occurrences[-1] = line_no  # keep the first ones and the latest
        else:
            self._occurrences.append(line_no)

    def symptom(self, line_no: int, category: str, pattern_id: str, line: str) -> None:
        known = self._symptoms.get(pattern_id)
        if known is not None:
            self._symptoms[pattern_id] = Symptom(
                known.line_no, known.category, known.pattern_id, known.line, known.count + 1
            )
        elif len(self._symptoms) < MAX_SYMPTOMS:
            text = line if len(line) <= SYMPTOM_MAX_CHARS else line[: SYMPTOM_MAX_CHARS - 1] + "…"
            self._symptoms[pattern_id] = Symptom(line_no, category, pattern_id, text)

    def chain(self) -> Chain:
        return Chain(
            tuple(sorted(self._symptoms.values(), key=lambda s: s.line_no)),
            tuple(self._occurrences),
            self._count,
        )
