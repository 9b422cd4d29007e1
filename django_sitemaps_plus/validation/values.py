"""The protocol's own values: lastmod, changefreq and priority."""

from __future__ import annotations

import datetime as dt
from typing import Any, Final

from django_sitemaps_plus import protocol
from django_sitemaps_plus.extensions.rules.values import (
    MAX_KNOWN_VALUES,
    Findings,
    is_priority,
    strip,
    w3c_span,
)

#: Distinct lastmod values whose verdict is remembered (dates recur across entries).
MAX_LASTMOD_VERDICTS: Final = 4_096
#: A timestamp this far ahead of now is still "now" (clock skew).
FUTURE_TOLERANCE: Final = dt.timedelta(minutes=10)


class ProtocolValues:
    """lastmod (SM401-SM404), changefreq (SM405) and priority (SM406) of one file.

    ``*_ok(value)`` is true when the exact text has nothing to report; the
    ``check_*`` methods report what there is. Both rest on one judgement per
    rule (``judge_lastmod``, ``judge_changefreq``, ``judge_priority``), and
    each distinct value is judged once (dates and priorities recur).
    """

    def __init__(self, report: Findings, now: dt.datetime) -> None:
        self.report = report
        self.now = now
        #: lastmod value → the problems it has (an empty tuple: none).
        self.lastmod_verdicts: dict[str, tuple[tuple[str, str], ...]] = {}
        #: Priority values seen valid (few distinct ones per file).
        self.valid_priorities: set[str] = set()
        # SM404: whether every entry has one same lastmod.
        self.lastmod_first: str | None = None
        self.lastmod_same = True
        self.lastmod_count = 0

    # lastmod

    def judge_lastmod(self, value: str) -> tuple[tuple[str, str], ...]:
        match = protocol.W3C_DATETIME_RE.fullmatch(value)
        if match is None:
            return (("SM401", f"{value!r} is not W3C Datetime"),)
        problems: list[tuple[str, str]] = []
        day, hour, second = match.group("day", "hour", "second")
        if day is None or (hour is not None and second is None):
            problems.append(
                (
                    "SM402",
                    f"{value!r} is W3C Datetime, but the official XSD "
                    "(xsd:date | xsd:dateTime) rejects it",
                )
            )
        span = w3c_span(value)
        if span is None:
            problems.append(("SM401", f"{value!r} is not a calendar date"))
        elif span[0] > self.now + FUTURE_TOLERANCE:
            problems.append(("SM403", f"{value!r} is in the future"))
        return tuple(problems)

    def lastmod_verdict(self, value: str) -> tuple[tuple[str, str], ...]:
        """The problems of a lastmod value (stripped), each distinct value judged once."""
        problems = self.lastmod_verdicts.get(value)
        if problems is None:
            problems = self.judge_lastmod(value)
            if len(self.lastmod_verdicts) < MAX_LASTMOD_VERDICTS:
                self.lastmod_verdicts[value] = problems
        return problems

    def lastmod_ok(self, value: str) -> bool:
        problems = self.lastmod_verdicts.get(value)
        if problems is None:
            if value.strip() != value:
                return False  # SM210
            problems = self.lastmod_verdict(value)
        return not problems

    def check_lastmod(self, element: Any, loc: str) -> None:
        value = strip(element.text, self.report, "lastmod", element)
        self.note_lastmod(value)
        for rule, message in self.lastmod_verdict(value):
            self.report.add(rule, message, line=element.sourceline, url=loc or None)

    def note_lastmod(self, value: str) -> None:
        """Count an entry's lastmod for SM404 (all entries with the same one)."""
        self.lastmod_count += 1
        if self.lastmod_first is None:
            self.lastmod_first = value
        elif value != self.lastmod_first:
            self.lastmod_same = False

    def note_lastmods(self, values: list[str]) -> None:
        """``note_lastmod`` for a batch of entries at once."""
        self.lastmod_count += len(values)
        if self.lastmod_first is None:
            self.lastmod_first = values[0]
        if self.lastmod_same:
            first = self.lastmod_first
            self.lastmod_same = all(value == first for value in set(values))

    def finish(self, entries: int) -> None:
        if (
            self.lastmod_same
            and self.lastmod_first is not None
            and self.lastmod_count == entries
            and entries >= protocol.SAME_LASTMOD_MIN_ENTRIES
        ):
            self.report.add("SM404", f"all {entries:,} entries have lastmod {self.lastmod_first}")

    # changefreq

    @staticmethod
    def changefreq_ok(value: str | None) -> bool:
        return value in protocol.CHANGEFREQ_VALUES

    def check_changefreq(self, element: Any, loc: str) -> None:
        value = strip(element.text, self.report, "changefreq", element)
        if not self.changefreq_ok(value):
            self.report.add(
                "SM405",
                f"{value!r} is not a changefreq value",
                line=element.sourceline,
                url=loc or None,
            )

    # priority

    def priority_ok(self, value: str | None) -> bool:
        """Whether the exact text is a valid priority (remembered when it is)."""
        known = self.valid_priorities
        if value in known:
            return True
        if value is None or value.strip() != value or not is_priority(value):
            return False
        if len(known) < MAX_KNOWN_VALUES:
            known.add(value)
        return True

    def check_priority(self, element: Any, loc: str) -> None:
        value = strip(element.text, self.report, "priority", element)
        if not is_priority(value):
            self.report.add(
                "SM406",
                f"{value!r} is not a decimal from 0.0 to 1.0",
                line=element.sourceline,
                url=loc or None,
            )
