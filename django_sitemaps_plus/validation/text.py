"""Text sitemaps: one absolute URL per line, UTF-8, the same limits as XML."""

from __future__ import annotations

from typing import Final

from django_sitemaps_plus import protocol
from django_sitemaps_plus.extensions.rules.values import strip
from django_sitemaps_plus.validation.context import Context
from django_sitemaps_plus.validation.locations import LocChecker
from django_sitemaps_plus.validation.report import FileReport

#: A text sitemap line longer than this is reported and skipped unread.
MAX_TEXT_LINE_BYTES: Final = 4 * protocol.MAX_LOC_LENGTH


class TextChecker:
    """A text sitemap: one absolute URL per line, UTF-8, the same limits."""

    def __init__(self, report: FileReport, context: Context) -> None:
        self.report = report
        self.report.kind = "text"
        self.stopped = False
        self._locs = LocChecker(report, context)
        self._buffer = b""
        self._line = 0
        self._entries = 0
        self._skipping_long_line = False

    def feed(self, chunk: bytes) -> None:
        data = self._buffer + chunk
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._skipping_long_line:
                self._skipping_long_line = False
            else:
                self._check_line(data[start:end])
            start = end + 1
        self._buffer = data[start:]
        if len(self._buffer) > MAX_TEXT_LINE_BYTES and not self._skipping_long_line:
            self._line += 1
            self._entries += 1
            self.report.add(
                "SM305", f"a line of more than {MAX_TEXT_LINE_BYTES:,} bytes", line=self._line
            )
            self._skipping_long_line = True
        if self._skipping_long_line:
            self._buffer = b""

    def close(self, *, truncated: bool = False) -> None:
        if self._buffer and not self._skipping_long_line and not truncated:
            self._check_line(self._buffer)
        self._buffer = b""
        self.report.entries = self._entries
        if self._entries == 0:
            self.report.add("SM204", "no URLs in the text sitemap")

    def _check_line(self, raw: bytes) -> None:
        self._line += 1
        line = self._line
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.report.add("SM101", f"not UTF-8: {exc.reason} at byte {exc.start}", line=line)
            return
        if line == 1 and text.startswith("\ufeff"):
            self.report.add("SM105", "the file starts with a UTF-8 byte order mark", line=1)
            text = text[1:]
        if not text.strip():
            self.report.add("SM901", "blank line", line=line)
            return
        value = strip(text, self.report, "line", line)
        self._entries += 1
        if self._entries == protocol.MAX_URLS_PER_FILE + 1:
            self.report.add("SM501", f"line {line:,} is URL {self._entries:,}", line=line)
        self._locs.check(value, line)
