"""The terminal edge: colour for text output and a live status line, via rich.

Both only on an interactive terminal: never when the stream is not a TTY, never under CI
(`CI` is set by GitHub Actions, Buildkite and most others), and no colour with `NO_COLOR`
(https://no-color.org). Everything else gets the plain text, byte for byte.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from bot.render.text import STYLES, Segments

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status


def interactive(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("CI")


def _console(stream: TextIO) -> Console:
    # Deliberately lazy (start-up time): rich costs ~40 ms to import, and only a person at
    # a terminal gets anything from it.
    from rich.console import Console

    return Console(file=stream, no_color=bool(os.environ.get("NO_COLOR")), highlight=False,
                   soft_wrap=True)


def write_segments(segments: Segments, stream: TextIO) -> None:
    """The text output, coloured on an interactive terminal, else exactly `render`'s text."""
    if not interactive(stream):
        stream.write("".join(text for text, _ in segments))
        return
    # Deliberately lazy (start-up time): see _console.
    from rich.text import Text

    text = Text()
    for part, style in segments:
        text.append(part, style=STYLES.get(style, ""))
    _console(stream).print(text, end="")


class StatusLine:
    """A spinner with the latest progress message; silent when not interactive."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = interactive(stream)
        self._status: Status | None = None

    def __call__(self, text: str) -> None:
        if not self.live:
            return
        if self._status is None:
            self._status = _console(self.stream).status(text[:200])
            self._status.start()
        else:
            self._status.update(text[:200])

    def done(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __enter__(self) -> StatusLine:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.done()
