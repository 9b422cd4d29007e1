"""What the index knows of a section's files: ``PageInfo`` (one file: its
number, lastmod and URL count), ``LastmodCounts`` (a section's URLs by the
day of their lastmod, for the admin overview), and the ``PageInfo`` of a
layout's spans (``span_info``) or of pages counted by position
(``counted_pages``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django_sitemaps_plus.engine import pagination
from django_sitemaps_plus.engine.lastmod import LastmodValue


@dataclass(frozen=True)
class PageInfo:
    """One file of a section, as listed in the index."""

    number: int
    lastmod: LastmodValue
    url_count: int
    #: What ``page_info`` already computed that ``page_entries`` can reuse
    #: (a contrib sitemap's rendered URLs), so a page is not rendered twice.
    prepared: Any = field(default=None, compare=False, repr=False)
    #: When the file next changes by the clock alone, if ``index_pages`` or
    #: ``page_info`` knew it already; None: ask ``Section.expires_at``.
    expires_at: dt.datetime | None = field(default=None, compare=False, repr=False)
    #: The bytes of the file's entries, when its layout measured or bounded them.
    entry_bytes: int | None = field(default=None, compare=False, repr=False)


@dataclass
class LastmodCounts:
    """How many of a section's URLs last changed on each day (UTC), and how
    many have no lastmod: what the admin overview plots."""

    by_day: dict[dt.date, int] = field(default_factory=dict)
    undated: int = 0

    @property
    def total(self) -> int:
        return sum(self.by_day.values()) + self.undated

    def add(self, day: dt.date | None, urls: int = 1) -> None:
        if day is None:
            self.undated += urls
        else:
            self.by_day[day] = self.by_day.get(day, 0) + urls


def counted_spans(count: int, size: int, per_item: int) -> list[pagination.Span]:
    """A plain section's files laid out by count: pages of ``size`` items
    by position, unmeasured (``Span.size`` None). The last ends where a full
    page would, so items added since are served within it."""
    return [
        pagination.Span(
            number,
            (number - 1) * size,
            number * size,
            min(size, count - (number - 1) * size) * per_item,
            None,
        )
        for number in range(1, -(-count // size) + 1)
    ]


def counted_pages(count: int, size: int, per_item: int) -> list[PageInfo]:
    """The index's view of ``count`` items in pages of ``size``, with no lastmod."""
    return [PageInfo(s.number, None, s.urls) for s in counted_spans(count, size, per_item)]


def span_info(span: pagination.Span) -> PageInfo:
    """The index's view of a file of a section's layout; the span travels
    with it (``prepared``), so the file's rows are read from its key range."""
    return PageInfo(span.number, span.lastmod, span.urls, prepared=span, entry_bytes=span.size)
