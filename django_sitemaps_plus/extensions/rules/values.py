"""Value checks shared by the extensions' rules and the validator: the rules
of an element's text (W3C dates, decimals in a range, http(s) URLs,
surrounding whitespace).

Each value rule is one judgement used by both paths of the XML checker: the
per-entry path reports what ``judge`` finds, the batch path accepts a value
only when ``ok`` (the exact text, nothing to report) holds. Nothing here
imports lxml or Django, nor the validator: the writers import these too.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Final, Protocol

from django_sitemaps_plus import protocol

#: Distinct priority (and hreflang) values remembered as valid (few per file).
MAX_KNOWN_VALUES: Final = 1_000
#: A date (no time) begins first in UTC+14 and ends last in UTC-12.
_EARLIEST_ZONE_AHEAD: Final = dt.timedelta(hours=14)
_LATEST_ZONE_BEHIND: Final = dt.timedelta(hours=12)
#: The common case of an absolute http(s) URL with a plain host, matched
#: without urlsplit (the hot path); anything else goes through loc_problem.
PLAIN_HTTP_URL_RE: Final = re.compile(
    r"(?P<scheme>https?)://(?P<netloc>[A-Za-z0-9.-]+(?::\d{1,5})?)"
    r"(?P<path>[^?#]*)(?:\?(?P<query>[^#]*))?(?:#|$)"
)
#: The characters of a clean URL's path: unreserved and sub-delims (no %, no ;).
CLEAN_PATH_CHARS: Final = r"[A-Za-z0-9\-._~!$&'()*+,=:@/]"
#: A URL needing none of the character, escape, length or parameter checks:
#: http(s), a plain host, a path of clean characters only (no query, no
#: fragment, ASCII).
CLEAN_URL_RE: Final = re.compile(
    rf"(https?)://([A-Za-z0-9.-]+(?::\d{{1,5}})?)(/{CLEAN_PATH_CHARS}*)?"
)
#: Clean URLs, one a line (batches are checked joined with newlines).
CLEAN_URL_LINES_RE: Final = re.compile(
    rf"(?:https?://[A-Za-z0-9.-]+(?::\d{{1,5}})?(?:/{CLEAN_PATH_CHARS}*)?(?:\n|$))*"
)


class Findings(Protocol):
    """Where checks report (``FileReport``)."""

    def add(
        self,
        rule_id: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        url: str | None = None,
    ) -> None: ...


class Counter:
    """Occurrences of a repeated finding, reported once per file at the end."""

    def __init__(self) -> None:
        self.first: dict[str, int | None] = {}
        self.count: dict[str, int] = {}

    def note(self, key: str, line: int | None) -> None:
        if key not in self.count:
            self.first[key] = line
            self.count[key] = 0
        self.count[key] += 1


def strip(text: str | None, report: Findings, what: str, where: Any) -> str:
    """The value of an element's text; surrounding whitespace is reported (SM210).

    ``where`` is a line number or the element (its line is looked up only
    when there is something to report: ``sourceline`` is not free).
    """
    if text is None:
        return ""
    value = text.strip()
    if value != text and value:
        line = where if where is None or isinstance(where, int) else where.sourceline
        report.add("SM210", f"whitespace around the value of <{what}>", line=line, url=value)
    return value


def is_http_url(value: str) -> bool:
    """An absolute http(s) URL with a host, at most ``MAX_LOC_LENGTH`` characters."""
    if len(value) <= protocol.MAX_LOC_LENGTH and PLAIN_HTTP_URL_RE.match(value):
        return True  # fast path: implies protocol.loc_problem(value) is None
    return protocol.loc_problem(value) is None


def all_clean_urls(values: list[str]) -> bool:
    """A sufficient test, over a whole list at once (one scan in C), that
    ``is_http_url`` holds for every value as written (no surrounding
    whitespace): each is a clean URL within the length limit."""
    if not values:
        return True
    joined = "\n".join(values)
    # (An empty value would make an empty line, which the pattern accepts last.)
    return (
        joined[-1:] not in ("", "\n")
        and max(map(len, values)) <= protocol.MAX_LOC_LENGTH
        and CLEAN_URL_LINES_RE.fullmatch(joined) is not None
    )


def in_range(value: str, low: float, high: float, *, integer: bool = False) -> bool:
    """Whether ``value`` is an xsd:decimal (optional sign, digits with an optional
    fraction, or ".5"), or with ``integer`` digits only, from ``low`` to ``high``."""
    pattern = r"\d+" if integer else r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
    return re.fullmatch(pattern, value) is not None and low <= float(value) <= high


def is_priority(value: str) -> bool:
    return in_range(value, protocol.MIN_PRIORITY, protocol.MAX_PRIORITY)


# W3C Datetime --------------------------------------------------------------------

#: The first and last instants ``datetime`` holds: a span reaching past them
#: (year 1 in UTC+14, year 9999 in UTC-12) is clamped to them.
_FIRST_INSTANT: Final = dt.datetime.min.replace(tzinfo=dt.timezone.utc)
_LAST_INSTANT: Final = dt.datetime.max.replace(tzinfo=dt.timezone.utc)


def _shift(instant: dt.datetime, delta: dt.timedelta) -> dt.datetime:
    try:
        return instant + delta
    except OverflowError:
        return _FIRST_INSTANT if delta < dt.timedelta(0) else _LAST_INSTANT


def _month_start(year: int, month: int) -> dt.datetime:
    """The first instant of a month in UTC (the last instant there is after 9999)."""
    if year > dt.MAXYEAR:
        return _LAST_INSTANT
    return dt.datetime(year, month, 1, tzinfo=dt.timezone.utc)


def w3c_span(value: str) -> tuple[dt.datetime, dt.datetime] | None:
    """The earliest and latest UTC instants a W3C Datetime can mean, or None
    when it is not one (including dates the calendar lacks, like 2024-02-30).

    A value with a time is one instant. A date, month or year without a zone
    spans from its start in UTC+14 to its end in UTC-12, so "in the future"
    and "older than two days" are only said when true in every zone. Instants
    before year 1 or after 9999 (in UTC) are clamped to the first or last one.
    """
    match = protocol.W3C_DATETIME_RE.fullmatch(value)
    if match is None:
        return None
    year, month, day = match["year"], match["month"], match["day"]
    try:
        if match["hour"] is None:
            start = dt.datetime(int(year), int(month or 1), int(day or 1), tzinfo=dt.timezone.utc)
            if day is not None:
                end = _shift(start, dt.timedelta(days=1))
            elif month is not None:
                end = _month_start(start.year + start.month // 12, start.month % 12 + 1)
            else:
                end = _month_start(start.year + 1, 1)
            return _shift(start, -_EARLIEST_ZONE_AHEAD), _shift(end, _LATEST_ZONE_BEHIND)
        tz = match["tz"]
        offset = dt.timedelta(0)
        if tz != "Z":
            sign = 1 if tz[0] == "+" else -1
            offset = sign * dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6]))
        local = dt.datetime(
            int(year),
            int(month),
            int(day),
            int(match["hour"]),
            int(match["minute"]),
            int(match["second"] or 0),
            tzinfo=dt.timezone(offset),
        )
    except ValueError:  # 2024-02-30: the pattern allows it, the calendar does not
        return None
    try:
        instant = local.astimezone(dt.timezone.utc)
    except OverflowError:  # UTC is behind (or ahead of) the zone, past year 9999 (or 1)
        instant = _LAST_INSTANT if offset < dt.timedelta(0) else _FIRST_INSTANT
    return instant, instant
