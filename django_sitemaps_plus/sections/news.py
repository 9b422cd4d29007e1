"""``NewsSection``: the articles published in the last two days, as a Google
News sitemap (docs/news.md); its ``news:news`` children are the ``News``
extension's (``extensions/news.py``).

The window moves with the clock, not with saves: ``expires_at()`` returns
the next moment an article leaves or a scheduled one enters, so a cache can
expire the file then.

The empty case: the rule book (and the XSD) make a ``urlset`` without ``<url>``
an error, while Google accepts an empty news sitemap. The news file stays in
the index at all times (so its address never 404s for a crawler that knows
it), and when no article is in the window it lists one ``<url>``: the
section's ``landing_location`` (default: the site's root) without
``news:news``, which is a valid document under every schema and gives Google
News nothing to index.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from django.conf import settings
from django.core.checks import CheckMessage
from django.db import models
from django.db.models import Max, Min, Q
from django.utils import timezone

from django_sitemaps_plus.engine import reads
from django_sitemaps_plus.engine.lastmod import latest
from django_sitemaps_plus.engine.render import Row
from django_sitemaps_plus.extensions.base import resolve_field, section_error
from django_sitemaps_plus.extensions.news import News, news_language
from django_sitemaps_plus.extensions.rules import news as rules
from django_sitemaps_plus.sections.base import Section
from django_sitemaps_plus.sections.model import ModelSection
from django_sitemaps_plus.sections.pages import PageInfo
from django_sitemaps_plus.sites import SiteContext


@dataclass(frozen=True)
class _Window:
    """One reading of the window: keys and lastmods newest first, the clock."""

    keys: list[Any]
    lastmods: list[Any]
    clock: dict[str, Any]


@dataclass(frozen=True)
class _PageKeys:
    """A page's keys, as ``page_info`` read them (``PageInfo.prepared``)."""

    keys: tuple[Any, ...]


class NewsSection(ModelSection):
    """Articles of the last two days as a Google News sitemap.
    Set ``publication_name`` (as it appears on Google News), ``date_field`` (a
    DateTimeField: when the article was published) and ``title_field``. The
    language defaults to ``settings.LANGUAGE_CODE``. ``lastmod_fields``
    defaults to ``[date_field]``.
    """

    name: str | None = "news"
    #: The publication's name exactly as on Google News.
    publication_name: str | None = None
    #: ISO 639 code (``zh-cn``/``zh-tw`` for Chinese); None: from LANGUAGE_CODE.
    publication_language: str | None = None
    date_field: str = "published_at"
    title_field: str = "title"
    #: Longest title written (longer ones are dropped, logged); sizes the file.
    max_title_length: int = 1_000
    #: The one ``<url>`` listed while no article is in the window (a path or
    #: a URL name): a news file is never an empty, schema-invalid urlset.
    landing_location: str = "/"
    #: The files are the window's, with a landing page while it is empty.
    writes_own_entries: ClassVar[bool] = True
    defines_own_page_info: ClassVar[bool] = True
    # Articles leave the file as they age out of the news window.
    changes_with_time: ClassVar[bool] = True

    def __init__(self, model: type[models.Model] | None = None, **options: Any) -> None:
        super().__init__(model, **options)
        if not self.lastmod_fields:
            self.lastmod_fields = [self.date_field]
        if not any(isinstance(ext, News) for ext in self.extensions):
            self.extensions = [News(), *self.extensions]

    def get_publication_language(self) -> str:
        return self.publication_language or news_language(settings.LANGUAGE_CODE)

    def urls_per_file(self) -> int:
        # Google News: at most 1,000 news:news per file.
        return min(super().urls_per_file(), rules.MAX_NEWS_PER_FILE)

    # The window -----------------------------------------------------------------

    def _window(self, now: dt.datetime) -> models.QuerySet[Any]:
        cutoff = now - dt.timedelta(days=rules.WINDOW_DAYS)
        window: models.QuerySet[Any] = self.get_queryset().filter(
            **{f"{self.date_field}__gt": cutoff, f"{self.date_field}__lte": now}
        )
        return window

    def _clock(self, now: dt.datetime) -> dict[str, Any]:
        """One aggregate: the oldest article in the window, the next scheduled
        one and the newest one that has left."""
        date = self.date_field
        cutoff = now - dt.timedelta(days=rules.WINDOW_DAYS)
        return self.get_queryset().aggregate(
            oldest=Min(date, filter=Q(**{f"{date}__gt": cutoff, f"{date}__lte": now})),
            upcoming=Min(date, filter=Q(**{f"{date}__gt": now})),
            departed=Max(date, filter=Q(**{f"{date}__lte": cutoff})),
        )

    def _read_window(self) -> _Window:
        """The window's keys and lastmods (newest first) and the clock: two
        queries, one reading of ``now``."""
        now = timezone.now()
        rows = list(
            self._window(now)
            .order_by(f"-{self.date_field}", "-pk")
            .annotate(_sitemaps_lastmod=self.lastmod_spec.row_expression())
            .values_list("pk", "_sitemaps_lastmod")
        )
        return _Window([key for key, _ in rows], [lastmod for _, lastmod in rows], self._clock(now))

    @staticmethod
    def _expiry(clock: dict[str, Any]) -> dt.datetime | None:
        window = dt.timedelta(days=rules.WINDOW_DAYS)
        moments = [clock["upcoming"], clock["oldest"] and clock["oldest"] + window]
        return min((m for m in moments if m is not None), default=None)

    def expires_at(self, number: int, site: SiteContext) -> dt.datetime | None:
        """The next moment the news files change by the clock alone.

        The earliest of: the oldest listed article leaving the window (its
        publication date plus two days) and the next scheduled article
        entering it. Every news file shifts then (pages are newest first), so
        a cache must expire them at that moment. None: nothing will change
        without a save. The pages from ``index_pages`` and ``page_info``
        carry it already (``PageInfo.expires_at``): the views ask no query.
        """
        return self._expiry(self._clock(timezone.now()))

    # Pages ------------------------------------------------------------------------

    def _pages(self, window: _Window) -> list[PageInfo]:
        departed = window.clock["departed"]
        left_at = departed + dt.timedelta(days=rules.WINDOW_DAYS) if departed else None
        # Pages are newest first, so an article arriving or leaving shifts
        # every file: they share the lastmod of the whole window.
        lastmod = latest([*window.lastmods, left_at])
        expires_at = self._expiry(window.clock)
        if not window.keys:
            return [PageInfo(1, lastmod, 1, expires_at=expires_at)]
        size = self.items_per_file()
        # Each page's keys travel with it to page_entries: the window is not read again.
        return [
            PageInfo(
                start // size + 1,
                lastmod,
                len(window.keys[start : start + size]),
                prepared=_PageKeys(tuple(window.keys[start : start + size])),
                expires_at=expires_at,
            )
            for start in range(0, len(window.keys), size)
        ]

    def index_pages(self, site: SiteContext) -> list[PageInfo]:
        return self._pages(self._read_window())

    def page_info(self, number: int, site: SiteContext) -> PageInfo | None:
        return next(
            (page for page in self._pages(self._read_window()) if page.number == number), None
        )

    def page_rows(
        self, number: int, site: SiteContext, info: PageInfo | None = None
    ) -> Iterator[list[Row]]:
        # Its pages are the window's, newest first, not key ranges.
        newest_first = (f"-{self.date_field}", "-pk")
        prepared = info.prepared if info is not None else None
        if isinstance(prepared, _PageKeys):
            keys: Sequence[Any] = prepared.keys
        else:
            size = self.items_per_file()
            window = self._window(timezone.now()).order_by(*newest_first)
            keys = list(window.values_list("pk", flat=True))[(number - 1) * size : number * size]
        page = self.site_queryset(site).filter(pk__in=keys).order_by(*newest_first)
        return reads.model_rows(self, page, site)

    def page_entries(
        self, number: int, site: SiteContext, info: PageInfo | None = None
    ) -> Iterator[str]:
        listed = False
        for entry in super().page_entries(number, site, info):
            listed = True
            yield entry
        if not listed and number == 1:
            url = self.location_urls([self.landing_location], site)[0]
            landing = self._entry(self.landing_location, url, None)
            if landing is not None:
                yield landing

    def location(self, item: Any) -> str:
        if isinstance(item, str):
            return Section.location(self, item)
        return super().location(item)

    # Checks -------------------------------------------------------------------------

    def news_errors(self) -> list[CheckMessage]:
        errors: list[CheckMessage] = []
        if not self.publication_name:
            message = (
                "NewsSection needs publication_name, the publication's name as it appears on "
                "Google News."
            )
            errors.append(section_error(self, message, "sitemaps_plus.E122"))
        try:
            field = resolve_field(self.get_model(), self.date_field)
        except LookupError as exc:
            errors.append(section_error(self, f"date_field {exc}.", "sitemaps_plus.E123"))
        else:
            if not isinstance(field, models.DateTimeField):
                message = (
                    f"date_field {self.date_field!r} is a {type(field).__name__}; the two-day "
                    "window needs a DateTimeField."
                )
                errors.append(section_error(self, message, "sitemaps_plus.E123"))
        try:
            resolve_field(self.get_model(), self.title_field)
        except LookupError as exc:
            errors.append(section_error(self, f"title_field {exc}.", "sitemaps_plus.E124"))
        language = self.get_publication_language()
        if not rules.LANGUAGE_RE.fullmatch(language):
            message = (
                f"publication language {language!r} is not an ISO 639 code (or zh-cn / zh-tw)."
            )
            errors.append(section_error(self, message, "sitemaps_plus.E125"))
        return errors
