"""A plain section's pages: what ``Section`` does with the items of
``items()`` (URL names, paths, objects or a QuerySet) when it defines no
pages of its own.

Small sections are pages of ``items_per_file()`` items; one that could
outgrow a file is laid out by ``layout`` (measured, or counted for a small
QuerySet) and its pages are the layout's spans. A page read for
``page_info`` carries its items and lastmods to ``page_rows``: ``items()``
and ``lastmod()`` run once per request.
"""

from __future__ import annotations

from collections.abc import Iterator, Sized
from dataclasses import dataclass, replace
from itertools import islice
from typing import TYPE_CHECKING, Any

from django.db import models

from django_sitemaps_plus.engine import layout, measuring, pagination
from django_sitemaps_plus.engine.lastmod import LastmodValue, latest_of_all
from django_sitemaps_plus.engine.reads import BATCH_ROWS
from django_sitemaps_plus.engine.render import Row
from django_sitemaps_plus.sections.pages import PageInfo, counted_pages, counted_spans, span_info
from django_sitemaps_plus.sites import SiteContext, call_with_site

if TYPE_CHECKING:
    from django_sitemaps_plus.sections.base import Section


@dataclass(frozen=True)
class _PlainPage:
    """A page as ``page_info`` read it (``PageInfo.prepared``): items and their lastmod."""

    items: list[Any]
    lastmods: list[LastmodValue]


def laid_out(section: Section, items: Any) -> bool:
    """Whether the section's files are the spans of its kept layout
    (``layout.remembered``) rather than pages of ``items_per_file()``.

    Not when sized by count (``measures_files()`` False). A QuerySet is
    always: the layout the index makes counts its rows once and measures
    them only when they could outgrow one file (``compute_layout``), so a
    file request asks no ``COUNT``. A list is when its length could
    outgrow one file; any other iterable always is.
    """
    if not section.measures_files():
        return False
    if isinstance(items, models.QuerySet) or not isinstance(items, Sized):
        return True
    return not section.fits_unmeasured(len(items) * section.urls_per_item())


def index_pages(section: Section, site: SiteContext) -> list[PageInfo]:
    items = call_with_site(section.items, site)
    if laid_out(section, items):
        spans = layout.current(section, site, refresh=True)
        if not (section.has_lastmod and spans and spans[0].size is None):
            return [span_info(span) for span in spans]
        # Laid out by count, with lastmod in Python: read each file's rows,
        # streamed, never held.
        return [
            replace(
                span_info(span),
                lastmod=latest_of_all(
                    [
                        section.lastmod(item)
                        for item in items[span.after or 0 : span.last].iterator(
                            chunk_size=BATCH_ROWS
                        )
                    ]
                ),
            )
            for span in spans
        ]
    size = section.items_per_file()
    per_item = section.urls_per_item()
    if isinstance(items, models.QuerySet):
        if not section.has_lastmod:
            # No lastmod to read: the index needs only the row count.
            return counted_pages(items.count(), size, per_item)
        # lastmod is Python: read every row once, streamed, never held.
        items = items.iterator(chunk_size=BATCH_ROWS)
    pages: list[PageInfo] = []
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        lastmod = latest_of_all([section.lastmod(item) for item in chunk])
        pages.append(PageInfo(len(pages) + 1, lastmod, len(chunk) * per_item))
    return pages


def compute_layout(section: Section, site: SiteContext) -> layout.Laid:
    """A QuerySet few enough to fit one file is laid out by its count (one
    ``COUNT``, nothing rendered), anything else measured."""
    items = call_with_site(section.items, site)
    if isinstance(items, models.QuerySet):
        count = items.count()
        if section.fits_unmeasured(count * section.urls_per_item()):
            spans = counted_spans(count, section.items_per_file(), section.urls_per_item())
            return layout.Laid(spans)
    return layout.Laid(measuring.measured_items(section, items, site))


def page_info(section: Section, number: int, site: SiteContext) -> PageInfo | None:
    if number < 1:
        return None
    items, span = _page_items(section, number, site)
    if not items:
        return None
    lastmods = [section.lastmod(item) for item in items]
    return PageInfo(
        number,
        latest_of_all(lastmods),
        # A measured file's URLs as counted; else each item's most.
        span.urls
        if span is not None and span.size is not None
        else len(items) * section.urls_per_item(),
        prepared=_PlainPage(items, lastmods),
    )


def _page_items(
    section: Section, number: int, site: SiteContext
) -> tuple[list[Any], pagination.Span | None]:
    """Page ``number``'s items, and its span when the section is laid out:
    a QuerySet is sliced in SQL (LIMIT and OFFSET), never loaded whole; any
    other iterable is read up to the page."""
    items = call_with_site(section.items, site)
    span = None
    if laid_out(section, items):
        span = layout.file_span(section, number, site)[0]
        if span is None:
            return [], None
        start, stop = span.after or 0, span.last
    else:
        size = section.items_per_file()
        start, stop = (number - 1) * size, number * size
    if isinstance(items, models.QuerySet):
        return list(items[start:stop]), span
    return list(islice(items, start, stop)), span


def page_rows(
    section: Section, number: int, site: SiteContext, info: PageInfo | None
) -> Iterator[list[Row]]:
    prepared = info.prepared if info is not None else None
    if isinstance(prepared, _PlainPage):
        items, lastmods = prepared.items, prepared.lastmods
    else:
        items = _page_items(section, number, site)[0]
        lastmods = [section.lastmod(item) for item in items]
    for start in range(0, len(items), BATCH_ROWS):
        end = start + BATCH_ROWS
        yield section.plain_rows(items[start:end], lastmods[start:end], site)
