"""Progress of a long command on standard error, shared by ``build_sitemaps``
and ``validate_sitemaps`` (what a line shows: docs/commands.md).

Nothing shows for a run that ends within ``DELAY`` seconds. After that, on a
terminal one line is redrawn in place (with a bar); elsewhere (a pipe, a log
file, cron's mail) a new line is written at most every ``INTERVAL`` seconds,
and once more at the end. Standard output is left alone, so a report or a
JSON document there stays clean.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.core.management.base import OutputWrapper

#: Seconds a run goes on before its progress shows: a quick run prints nothing.
DELAY = 2.0
#: Seconds between two progress lines when standard error is not a terminal.
INTERVAL = 10.0
_BAR_WIDTH = 30


def _now() -> float:
    """The clock of a progress line (tests replace it)."""
    return time.monotonic()


def _plain(text: str) -> str:
    return text  # progress is not an error: not in the error style


class ProgressLine:
    """Call with ``(done, total, detail)`` after each step; ``finish()`` at the end."""

    def __init__(
        self,
        stream: OutputWrapper,
        *,
        enabled: bool,
        label: str,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.stream = stream
        self.enabled = enabled
        self.label = label
        self.terminal = stream.isatty()
        self.clock = clock if clock is not None else _now
        self.started = self.clock()
        #: The first step seen (done, when): what the rate is measured from.
        self.first: tuple[int, float] | None = None
        self.shown_at: float | None = None
        self.width = 0
        self.latest = self.printed = ""

    def __call__(self, done: int, total: int, detail: str) -> None:
        if not self.enabled:
            return
        now = self.clock()
        elapsed = now - self.started
        if self.first is None:
            self.first = (done, now)
        text = f"{done:,}/{total:,} files, {detail}, {elapsed:.0f}s{self._pace(done, total, now)}"
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

    def _pace(self, done: int, total: int, now: float) -> str:
        """`` (rate files/s; ETA time)`` once files were done since the first
        step seen (no ", " in it: a line's last ", " part is its times)."""
        assert self.first is not None
        since, then = self.first
        if done <= since or now <= then:
            return ""
        rate = (done - since) / (now - then)
        pace = f"{rate:.1f} files/s" if rate < 10 else f"{rate:,.0f} files/s"
        if done < total:
            pace += f"; ETA {duration((total - done) / rate)}"
        return f" ({pace})"

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


def duration(seconds: float) -> str:
    """``40s``, ``3m20s``, ``2h05m``: a time left, for people."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
