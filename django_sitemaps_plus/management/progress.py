"""Progress of a long command on standard error, shared by ``build_sitemaps``
and ``validate_sitemaps``.

Nothing shows for a run that ends within ``DELAY`` seconds. After that, on a
terminal one line is redrawn in place (with a bar); elsewhere (a pipe, a log
file, cron's mail) a new line is written at most every ``INTERVAL`` seconds,
and once more at the end. Standard output is left alone, so a report or a
JSON document there stays clean. Commands disable it for ``-v 0`` (and
``--quiet``).
"""

from __future__ import annotations

import time

from django.core.management.base import OutputWrapper

#: Seconds a run goes on before its progress shows: a quick run prints nothing.
DELAY = 2.0
#: Seconds between two progress lines when standard error is not a terminal.
INTERVAL = 10.0
_BAR_WIDTH = 30


def _plain(text: str) -> str:
    return text  # progress is not an error: not in the error style


class ProgressLine:
    """Call with ``(done, total, detail)`` after each step; ``finish()`` at the end."""

    def __init__(self, stream: OutputWrapper, *, enabled: bool, label: str) -> None:
        self.stream = stream
        self.enabled = enabled
        self.label = label
        self.terminal = stream.isatty()
        self.started = time.monotonic()
        self.shown_at: float | None = None
        self.width = 0
        self.latest = self.printed = ""

    def __call__(self, done: int, total: int, detail: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self.started
        text = f"{done:,}/{total:,} files, {detail}, {elapsed:.0f}s"
        self.latest = text
        if elapsed < DELAY:
            return
        if not self.terminal and self.shown_at is not None and now - self.shown_at < INTERVAL:
            return
        self.shown_at = now
        if self.terminal:
            filled = _BAR_WIDTH * min(done, total) // max(total, 1)
            line = f"[{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] {text}"
            # Spaces over what a longer line before left.
            self.stream.write(f"\r{line:<{self.width}}", style_func=_plain, ending="")
            self.width = len(line)
        else:
            self._line(text)
        self.printed = text
        self.stream.flush()

    def finish(self) -> None:
        """End the line redrawn on a terminal; elsewhere, write where the run
        ended unless that was the last line written. Only after a progress
        line was shown: a quick run prints nothing at all."""
        if self.shown_at is None:
            return
        if self.terminal:
            self.stream.write("", style_func=_plain, ending="\n")
        elif self.latest != self.printed:
            self._line(self.latest)
        self.stream.flush()
        self.shown_at = None

    def _line(self, text: str) -> None:
        self.stream.write(f"{self.label}: {text}", style_func=_plain, ending="\n")
