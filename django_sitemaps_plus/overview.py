"""What the admin overview shows: the index's figures (the same queries), each
section's URLs by lastmod day (``Section.lastmod_counts``, one grouped query for
a model section) drawn as an SVG plot, and an HTML table of each file.

People read it: every time is one ``<time>`` element (``time_element``), every
location an IRI (``html_sitemap.display_url``): the template filters
``sitemap_time`` and ``sitemap_iri``. The XML keeps its URIs."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils import dateformat, formats, timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from django_sitemaps_plus import names
from django_sitemaps_plus.build import status as build_status
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine.lastmod import LastmodValue
from django_sitemaps_plus.fetch import FetchError, SiteFetcher
from django_sitemaps_plus.registry import site as registry
from django_sitemaps_plus.sections import LastmodCounts, PageInfo, Section
from django_sitemaps_plus.serving.responses import as_utc
from django_sitemaps_plus.serving.storage import get_build_storage
from django_sitemaps_plus.serving.versions import remember
from django_sitemaps_plus.sites import SiteContext, site_context


@dataclass
class FileRow:
    section: str
    number: int
    url: str
    urls: int
    lastmod: LastmodValue

    @property
    def name(self) -> str:
        """``sitemap-<section>-<number>.xml``."""
        return names.file_name(self.section, self.number)


@dataclass
class SectionRow:
    name: str
    files: list[FileRow] = field(default_factory=list)
    counts: LastmodCounts | None = None

    @property
    def urls(self) -> int:
        return sum(f.urls for f in self.files)

    @property
    def newest(self) -> LastmodValue:
        dated = [f.lastmod for f in self.files if f.lastmod is not None]
        return max(dated, key=as_utc) if dated else None

    @property
    def oldest_day(self) -> dt.date | None:
        """The day the least recently changed of its URLs last changed (from
        the lastmod counts: a day, as the plot's bars are)."""
        if self.counts is None or not self.counts.by_day:
            return None
        return min(self.counts.by_day)

    @property
    def undated_share(self) -> float:
        """The share of the section's URLs without a lastmod."""
        if self.counts is None or not self.counts.total:
            return 0.0
        return self.counts.undated / self.counts.total

    @property
    def undated_percent(self) -> str:
        """``undated_share`` for people: "0%", "<1%", "14%", "100%"."""
        share = self.undated_share
        if 0 < share < 0.01:
            return "<1%"
        if 0.99 < share < 1:
            return ">99%"
        return f"{share:.0%}"

    @property
    def plot(self) -> str:
        return lastmod_plot(self.counts) if self.counts is not None else ""


#: What a table shows for no time: an en dash.
NO_TIME = "\N{EN DASH}"


def time_element(value: dt.date | dt.datetime | str | float | None) -> SafeString:
    """A time for people: ``<time datetime="...">`` (the ISO value, for
    machines and on hover) around it in the locale's ``DATETIME_FORMAT`` in the
    current time zone (``TIME_ZONE``, or the one activated), the zone named; a
    date alone in ``DATE_FORMAT``. Takes a date or datetime (naive: UTC), W3C
    Datetime text (a lastmod read from a file) or epoch seconds; ``NO_TIME``
    for none, and text that is no time as it is."""
    if value is None or value == "":
        return mark_safe(NO_TIME)
    if isinstance(value, (int, float)):
        value = dt.datetime.fromtimestamp(value, tz=dt.timezone.utc)
    if isinstance(value, str):
        try:
            # A date alone is a date (parse_datetime would make it midnight).
            parsed: dt.date | None = parse_datetime(value) if "T" in value else parse_date(value)
        except ValueError:  # well formed, not a time: 2024-02-30
            parsed = None
        if parsed is None:
            return format_html("{}", value)
        value = parsed
    if not isinstance(value, dt.datetime):
        return format_html(
            '<time datetime="{}">{}</time>', value.isoformat(), formats.date_format(value)
        )
    value = as_utc(value)
    local = timezone.localtime(value)
    text = f"{formats.date_format(local, 'DATETIME_FORMAT')} {dateformat.format(local, 'T')}"
    return format_html('<time datetime="{0}" title="{0}">{1}</time>', value.isoformat(), text)


def _pages(section: Section, site: SiteContext) -> list[PageInfo]:
    """The section's files, remembered until the section changes (a save,
    ``invalidate()``), as its files are: a scan of the section on a large site."""
    name = section.get_name()
    pages: list[PageInfo] = remember(
        site, [section], f"overview-pages:{name}", partial(section.listed_pages, site)
    )
    return pages


def file_count(request: HttpRequest) -> int:
    """How many files the index lists (no lastmod counts computed)."""
    site = site_context(request)
    return sum(len(_pages(section, site)) for section in registry)


def sections(request: HttpRequest) -> list[SectionRow]:
    """Every registered section and its files, as the index lists them."""
    site = site_context(request)
    rows = []
    for section in registry:
        name = section.get_name()
        row = SectionRow(name)
        for page in _pages(section, site):
            try:
                path = reverse(
                    "sitemaps_plus:section", kwargs={"section": name, "page": page.number}
                )
            except NoReverseMatch:
                path = f"/{names.file_name(name, page.number)}"
            row.files.append(FileRow(name, page.number, path, page.url_count, page.lastmod))
        # A grouped scan of the section: remembered like its files.
        row.counts = remember(
            site, [section], f"overview-counts:{name}", partial(section.lastmod_counts, site)
        )
        rows.append(row)
    return rows


def last_build() -> dict[str, Any] | None:
    """The static build panel: the last build (``build_status.last_build``)
    and a running one (``running``: ``build_status.running_build``), when a
    build storage is configured."""
    if not (conf.BUILD_STORAGE or conf.get("BUILD_DIR")):
        return None

    storage = get_build_storage()
    return {
        **build_status.last_build(storage),
        "running": build_status.running_build(storage),
        "stalled_minutes": int(build_status.STALLED_AFTER // 60),
    }


# The lastmod plot ----------------------------------------------------------------

PLOT_WIDTH = 360
PLOT_HEIGHT = 64
#: Up to this many days between the first and the last lastmod, one bar a day;
#: past it, one bar a month.
DAILY_SPAN_DAYS = 92


def _buckets(by_day: dict[dt.date, int]) -> tuple[list[tuple[dt.date, int]], str]:
    """Bars (first day of the bar, URLs) without gaps, and their unit."""
    first, last = min(by_day), max(by_day)
    if (last - first).days <= DAILY_SPAN_DAYS:
        days = (last - first).days + 1
        return [
            (day, by_day.get(day, 0)) for day in (first + dt.timedelta(days=n) for n in range(days))
        ], "day"
    months: dict[dt.date, int] = {}
    for day, count in by_day.items():
        key = day.replace(day=1)
        months[key] = months.get(key, 0) + count
    bars = []
    month = first.replace(day=1)
    while month <= last:
        bars.append((month, months.get(month, 0)))
        month = (month + dt.timedelta(days=32)).replace(day=1)
    return bars, "month"


def lastmod_plot(counts: LastmodCounts) -> str:
    """An inline SVG bar chart: how many URLs last changed in each day or
    month. Plain SVG (no script, nothing loaded), each bar titled with its
    date and count, so the admin works offline."""
    if not counts.by_day:
        return ""
    bars, unit = _buckets(counts.by_day)
    tallest = max(count for _, count in bars) or 1
    step = PLOT_WIDTH / len(bars)
    width = max(step - 1, 1) if step > 2 else step
    # ISO in the data attributes; for people the locale's format, as the
    # overview's other dates (a month: YEAR_MONTH_FORMAT).
    iso = "%Y-%m-%d" if unit == "day" else "%Y-%m"
    shown = "DATE_FORMAT" if unit == "day" else "YEAR_MONTH_FORMAT"

    def label(day: dt.date) -> str:
        return escape(formats.date_format(day, shown))

    parts = [
        f'<svg class="lastmod-plot" xmlns="http://www.w3.org/2000/svg" '
        f'width="{PLOT_WIDTH}" height="{PLOT_HEIGHT + 14}" '
        f'viewBox="0 0 {PLOT_WIDTH} {PLOT_HEIGHT + 14}" role="img" '
        f'aria-label="URLs by lastmod {unit}, {label(bars[0][0])} to {label(bars[-1][0])}">'
    ]
    for position, (start, count) in enumerate(bars):
        height = PLOT_HEIGHT * count / tallest
        parts.append(
            f'<rect x="{position * step:.2f}" y="{PLOT_HEIGHT - height:.2f}" '
            f'width="{width:.2f}" height="{height:.2f}" fill="#417690" '
            f'data-date="{start:{iso}}" data-urls="{count}">'
            f"<title>{label(start)}: {count:,} URLs</title></rect>"
        )
    parts.append(
        f'<text x="0" y="{PLOT_HEIGHT + 12}" font-size="10" fill="#666">'
        f"{label(bars[0][0])}</text>"
        f'<text x="{PLOT_WIDTH}" y="{PLOT_HEIGHT + 12}" font-size="10" fill="#666" '
        f'text-anchor="end">{label(bars[-1][0])}</text></svg>'
    )
    # Safe: the markup holds numbers, and dates written above (escaped).
    return mark_safe("".join(parts))


# One file as an HTML table ----------------------------------------------------------

_NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "xhtml": "http://www.w3.org/1999/xhtml",
}


@dataclass
class UrlRow:
    position: int
    #: As the file lists it (a URI): the link.
    loc: str
    lastmod: str | None
    images: int
    alternates: int
    news: int
    videos: int


def file_rows(request: HttpRequest, name: str, number: int) -> list[UrlRow] | None:
    """The URLs of file ``number`` of section ``name``, read from the file the
    site serves (through its own views, in-process); None when it has none."""
    from lxml import etree

    url = site_context(request).absolute(
        reverse("sitemaps_plus:section", kwargs={"section": name, "page": number})
    )
    try:
        fetched = SiteFetcher(url).fetch(url)
    except FetchError:
        return None
    # A safe parser: no entities resolved, no network, no huge text nodes.
    parser = etree.XMLPullParser(
        events=("end",), tag=f"{{{_NS['sm']}}}url", resolve_entities=False, no_network=True
    )
    rows: list[UrlRow] = []

    def collect() -> None:
        for _, element in parser.read_events():
            rows.append(
                UrlRow(
                    len(rows) + 1,
                    element.findtext("sm:loc", "", _NS).strip(),
                    element.findtext("sm:lastmod", None, _NS),
                    len(element.findall("image:image", _NS)),
                    len(element.xpath("xhtml:link[@rel='alternate']", namespaces=_NS)),
                    len(element.findall("news:news", _NS)),
                    len(element.findall("video:video", _NS)),
                )
            )
            element.clear()

    try:
        for chunk in fetched.chunks:
            parser.feed(chunk)
            collect()
        parser.close()
        collect()
    finally:
        fetched.close()
    return rows
