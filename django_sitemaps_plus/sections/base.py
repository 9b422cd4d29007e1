"""``Section``: a group of URLs a site registers, like admin's ModelAdmin.

A plain section serves pages that are not model rows (URL names or paths);
``ModelSection`` (``sections/model.py``) and ``ContribSection``
(``contrib/django_sitemaps.py``) build on it.

Every section answers three questions for the views, each in a constant
number of queries: which pages exist and their lastmod (``index_pages``),
what one page's lastmod is (``page_info``), and the page's ``<url>`` entries
(``page_entries``), streamed. What an index lists is ``listed_pages``: the
pages of ``index_pages`` without any that would have no URL (a sample read
shows the section's items give URLs). A subclass declares what it overrides
through flags (``varies_per_item``...), and ``check()`` gives its system
check messages (``sections/checks.py``).

What a section asks its parts: ``sections/plain.py`` reads a plain
section's pages of ``items()``, ``render`` writes rows as entries,
``layout`` lays files out (``pagination`` packs) and keeps the layout,
``names`` names sections and files; ``sections/pages.py`` holds what the
index knows of a file (``PageInfo``).
"""

from __future__ import annotations

import datetime as dt
import html
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, ClassVar, Literal

from django.core.checks import CheckMessage
from django.core.exceptions import ObjectDoesNotExist
from django.db import DatabaseError, models
from django.urls import NoReverseMatch, reverse
from django.utils import translation

from django_sitemaps_plus import names
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine import layout, measuring, pagination, render
from django_sitemaps_plus.engine.lastmod import LastmodValue, day_of, format_w3c
from django_sitemaps_plus.engine.location import absolute_location, absolute_paths
from django_sitemaps_plus.engine.render import EntryWriter, Row
from django_sitemaps_plus.extensions.base import Extension
from django_sitemaps_plus.sections import plain
from django_sitemaps_plus.sections.checks import SectionChecks
from django_sitemaps_plus.sections.pages import LastmodCounts, PageInfo
from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")

#: How a section's files are sized: by URL count alone, by a byte bound
#: computed in SQL, or by measuring rendered entries (``file_sizing``).
FileSizing = Literal["count", "bound", "measure"]


class Section:
    """A group of URLs served as one or more sitemap files.
    Subclass and override ``items()`` and ``location()``; ``items(site)`` may
    take the site object of the request (``SiteContext.site``) to list
    different things per site; ``lastmod()``,
    ``changefreq`` and ``priority`` are optional and omitted by default
    (Google and Bing ignore changefreq and priority; Yandex uses priority).
    Items may be URL names (reversed) or paths starting with ``/``.
    """

    #: Used in file names (``sitemap-<name>-<page>.xml``); a slug.
    name: str | None = None
    #: URLs per file; at most 50,000 (protocol). None: ``SITEMAPS_PLUS["LIMIT"]``.
    limit: int | None = None
    #: Longest location (characters) the section expects; sizes each file so
    #: it stays under 52,428,800 bytes. None: ``SITEMAPS_PLUS["MAX_LOC_LENGTH"]``.
    max_loc_length: int | None = None
    changefreq: str | None = None
    priority: float | Decimal | None = None
    #: Extension instances whose children each ``<url>`` carries.
    extensions: Sequence[Extension] = ()
    #: More models whose saves and deletes invalidate this section's cached
    #: files, beside those found from its queryset (docs/caching.md).
    invalidated_by: Sequence[type[models.Model]] = ()

    # What the engine asks of a section ---------------------------------------
    # Each is declared by the class: a subclass that overrides the method
    # named beside a flag sets the flag too (check W009 warns when it does
    # not). The engine never looks at which methods a subclass defines.

    #: Whether changefreq or priority may differ between items: each entry
    #: then asks ``get_changefreq(item)`` and ``get_priority(item)``; else
    #: every entry has the section's ``changefreq`` and ``priority``, and a
    #: batch of entries is written at once. (``get_changefreq``/``get_priority``)
    varies_per_item: ClassVar[bool] = False
    #: Whether ``lastmod(item)`` gives a plain section's items a lastmod:
    #: without one, the index of a QuerySet of items is one ``COUNT``. A
    #: ``ModelSection``'s lastmod comes from ``lastmod_fields``. (``lastmod``)
    has_lastmod: ClassVar[bool] = False
    #: Whether ``index_pages()`` lists pages of the section's own making rather
    #: than pages of ``items()``: the default ``page_info()`` then takes the
    #: page from ``index_pages()``. (``index_pages``)
    defines_own_pages: ClassVar[bool] = False
    #: Whether ``page_entries()`` writes entries of its own (a news section's
    #: landing page): the text sitemap then takes its URLs from the entries,
    #: not from the page's rows. (``page_entries``)
    writes_own_entries: ClassVar[bool] = False
    #: Whether ``page_info()`` is the section's own rather than its
    #: layout's: a plain request for a file (``listed_info``) then asks it,
    #: never the figures a ``ModelSection``'s kept layout was made with.
    #: (``page_info``)
    defines_own_page_info: ClassVar[bool] = False
    #: Whether the section's rows change with the clock, not only when rows
    #: are saved (``expires_at()`` says when): a ``ModelSection``'s block
    #: figures are then read on every index, never kept (``kept_figures``).
    #: (``expires_at``)
    changes_with_time: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        for key, value in options.items():
            if not hasattr(type(self), key):
                raise TypeError(f"{type(self).__name__} has no option {key!r}")
            setattr(self, key, value)

    # What a site overrides ---------------------------------------------------

    def items(self, site: Any = None) -> Iterable[Any]:
        """The items; ``site`` is the request's site object (or None)."""
        return ()

    def location(self, item: Any) -> str:
        if isinstance(item, str):
            # A URL name (reversed), or a path or URL as given.
            return item if "/" in item else reverse(item)
        return str(item.get_absolute_url())

    def lastmod(self, item: Any) -> LastmodValue:
        return None

    def get_changefreq(self, item: Any) -> str | None:
        return self.changefreq

    def get_priority(self, item: Any) -> float | Decimal | None:
        return self.priority

    # System checks (``manage.py check``; ids in docs/checks.md) ---------------

    #: What ``check()`` asks (``sections.checks``), as ``ModelAdmin.checks_class``.
    checks_class: ClassVar[type[SectionChecks]] = SectionChecks

    def check(self) -> list[CheckMessage]:
        """This section's system check messages, as ``ModelAdmin.check()``
        (``checks.check_sections`` asks each registered section): those of
        ``checks_class``. Override to add a section's own; no query may run."""
        return self.checks_class().check(self)

    # Sizing -------------------------------------------------------------------

    def get_name(self) -> str:
        if self.name:
            return self.name
        stem = type(self).__name__.removesuffix("Section").removesuffix("Sitemap")
        return names.section_name(stem, "pages")

    def own_site(self, site: SiteContext) -> SiteContext:
        """The scheme and host this section's URLs (and its files in the
        index) are on: the request's, unless the section names its own."""
        return site

    def get_limit(self) -> int:
        return self.limit if self.limit is not None else conf.LIMIT

    def get_max_loc_length(self) -> int:
        return self.max_loc_length if self.max_loc_length is not None else conf.MAX_LOC_LENGTH

    def loc_budget(self) -> int:
        """The most bytes one URL of the section can take once written: each
        of its ``max_loc_length`` characters at worst six bytes (``&quot;``)."""
        return self.get_max_loc_length() * pagination.WORST_BYTES_PER_CHARACTER

    def namespaces(self) -> dict[str, str]:
        """Prefix → namespace of the extension elements this section writes."""
        return {ext.prefix: ext.namespace for ext in self.extensions}

    def item_pk(self, item: Any) -> Any:
        """The key of an item as given to ``Extension.fetch``."""
        return getattr(item, "pk", item)

    def urls_per_item(self) -> int:
        """Most ``<url>`` entries one item gives: the product of its extensions'
        ``urls_per_item`` (hreflang gives one per language, the rest one)."""
        count = 1
        for ext in self.extensions:
            count *= max(1, ext.urls_per_item(self))
        return count

    def items_per_file(self) -> int:
        """Items per file, so that their ``<url>`` entries fit ``urls_per_file()``.

        With hreflang over L languages an item gives up to L entries, so a
        page holds ``urls_per_file() // L`` items (a ModelSection's primary
        key ranges are this wide); both the 50,000 count and the byte cap
        hold for the entries.
        """
        return max(1, self.urls_per_file() // self.urls_per_item())

    def expires_at(self, number: int, site: SiteContext) -> dt.datetime | None:
        """When page ``number``'s content next changes by the clock alone.

        None for sections whose files change only when rows are saved. A news
        section's file changes when its oldest article leaves the two-day
        window (and when a scheduled article enters it): a cache must not keep
        the file past this moment.
        """
        return None

    def page_expires_at(self, page: PageInfo, site: SiteContext) -> dt.datetime | None:
        """``page``'s expiry: what ``index_pages``/``page_info`` put on it, else
        ``expires_at`` (the views ask this once per file)."""
        if page.expires_at is not None:
            return page.expires_at
        return self.expires_at(page.number, site)

    def location_in(
        self, language: str, item: Any, values: Sequence[Any] | None = None
    ) -> str | None:
        """``item``'s location with ``language`` active (for hreflang).

        ``location()`` under ``translation.override(language)``, so
        ``i18n_patterns`` URLs get that language's prefix; a model using
        django-parler is switched to that language for the call. None
        (logged by the caller) when it does not reverse.
        """
        set_language = getattr(item, "set_current_language", None)
        previous = item.get_current_language() if set_language is not None else None
        try:
            with translation.override(language):
                if set_language is not None:
                    set_language(language)
                return self.location(item)
        except (NoReverseMatch, ObjectDoesNotExist):
            # No URL in that language (or, with parler, no translation).
            return None
        finally:
            if set_language is not None:
                set_language(previous)

    def locators(self, rows: Sequence[Row]) -> list[Callable[[str], str | None]]:
        """For each row, ``locate(language)``: its location in that language."""
        return [self._locator(row[0], row[3]) for row in rows]

    def has_versions(self) -> bool:
        """Whether an extension gives items their entries (``versions``)."""
        return any(ext.gives_versions for ext in self.extensions)

    def _locator(self, item: Any, values: Sequence[Any] | None) -> Callable[[str], str | None]:
        # Positional: an override of the documented location_in(language, item) may rename them.
        return lambda language: self.location_in(language, item, values)

    def worst_entry_bytes(self) -> int:
        """The most bytes one legal ``<url>`` entry of this section can take:
        the tags, a location of ``max_loc_length`` characters each written as
        six bytes (``&quot;``), and the extensions' largest children."""
        children = sum(ext.max_bytes(self) for ext in self.extensions)
        return render.URL_TAGS_BYTES + self.loc_budget() + children

    def urls_per_file(self) -> int:
        """URLs per file for a section sized by count: the limit, lowered so
        a full file of ``worst_entry_bytes()`` entries fits 52,428,800 bytes.

        Sections whose files are measured (``measures_files()``) hold up to
        ``get_limit()`` URLs per file, as many as their real bytes allow.
        """
        room = pagination.room(self.namespaces())
        return max(1, min(self.get_limit(), room // self.worst_entry_bytes()))

    def measures_files(self) -> bool:
        """Whether files are sized from the entries' measured bytes.

        Not when a file of ``get_limit()`` worst-case entries fits the byte
        limit anyway (no extensions, and short ``max_loc_length`` or a low
        ``limit``): then the URL count alone sizes files, and no entry is
        rendered to lay them out.
        """
        return bool(self.extensions) or self.urls_per_file() < self.get_limit()

    def file_sizing(self) -> FileSizing:
        """How the layout sizes this section's files (docs/pagination.md):
        ``"count"`` when ``measures_files()`` is False, else ``"measure"``
        (entries rendered once and measured); a ``ModelSection`` whose
        locations are a pattern of fields is ``"bound"`` instead."""
        return "measure" if self.measures_files() else "count"

    # Rendering helpers --------------------------------------------------------

    def _entry(
        self,
        item: Any,
        url: str | None,
        lastmod: str | None,
        children: str = "",
        *,
        changefreq: str | None = None,
        priority: float | Decimal | str | None = None,
    ) -> str | None:
        """The ``<url>`` entry for ``item``, or None (logged) when it may not be listed."""
        return EntryWriter(self, changefreq, priority).write(item, url, lastmod, children)

    def drop_item(self, item: Any, why: str) -> None:
        """Log that ``item`` is left out of the file (``why``: what is wrong
        with its location or an extension's data). The engine, the
        extensions and a subclass call it; a subclass may extend it."""
        logger.warning(
            "Sitemap section %r: location of %r %s; not listed.", self.get_name(), item, why
        )

    def _absolute(self, item: Any, location: str, site: SiteContext) -> str | None:
        url, why = absolute_location(location, site)
        if url is None:
            self.drop_item(item, why or "is invalid")
        return url

    def location_urls(self, items: Sequence[Any], site: SiteContext) -> list[str | None]:
        """``location(item)`` of each of a batch of items made absolute, or
        None (logged) where it can't be listed: one item whose URL does not
        reverse, or whose ``get_absolute_url()`` fails, is left out, never the
        file. A database error is the request's (a 503).

        ``location()`` is called once per item; the results are checked as a
        batch (``absolute_paths``: one regex call and the base URL's checks
        made once) and one by one only when that cannot prove them all.
        """
        location = self.location
        locations: list[Any] = []
        append = locations.append
        for item in items:
            try:
                append(location(item))
            except DatabaseError:
                raise
            except NoReverseMatch as exc:
                self.drop_item(item, f"does not reverse: {exc}")
                append(None)
            except Exception as exc:
                logger.warning(
                    "Sitemap section %r: location(%r) raised %s; not listed.",
                    self.get_name(),
                    item,
                    type(exc).__name__,
                    exc_info=exc,
                )
                append(None)
        urls: list[str | None] | None = absolute_paths(locations, site)  # type: ignore[assignment]
        if urls is not None:
            return urls
        return [
            None if loc is None else self._absolute(item, loc, site)
            for item, loc in zip(items, locations)
        ]

    # What the engine calls (a plain section's pages: sections/plain.py) --------

    def fits_unmeasured(self, urls: int) -> bool:
        """Whether ``urls`` URLs fit one file whatever their entries: then no
        entry needs measuring to lay the section out (a small section)."""
        worst = urls * self.worst_entry_bytes()
        return urls <= self.get_limit() and worst <= pagination.room(self.namespaces())

    def index_pages(self, site: SiteContext) -> list[PageInfo]:
        return plain.index_pages(self, site)

    def listed_pages(
        self, site: SiteContext, pages: Sequence[PageInfo] | None = None
    ) -> list[PageInfo]:
        """The files an index lists: ``index_pages(site)`` (or ``pages``,
        what it gave) without the files that would have no URL, which answer
        404 (``views._first_or_404``).

        A file whose layout measured its entries (``Span.rendered``) has the
        URLs it counts. The others were counted from their rows, not from
        what the rows render: the first of them is the sample, read up to
        its first URL (a healthy section: its first batch of rows, one
        query at most, none for a list of items). When it has none (its
        items' ``location()`` all failed, each logged), the section's items
        may all fail: each of those files is read up to its first URL, and
        the ones without are left out, with an error logged.
        """
        if pages is None:
            pages = self.index_pages(site)
        listed = [page for page in pages if page.url_count > 0]
        counted = [
            page
            for page in listed
            if not (isinstance(page.prepared, pagination.Span) and page.prepared.rendered)
        ]
        if counted and not self._has_url(counted[0], site):
            empty = [counted[0], *(page for page in counted[1:] if not self._has_url(page, site))]
            listed = [page for page in listed if page not in empty]
        if len(listed) < len(pages):
            left_out = ", ".join(str(page.number) for page in pages if page not in listed)
            measuring.no_url_error(
                self, f"file {left_out}", "those files" if listed else "the section"
            )
        return listed

    def _has_url(self, page: PageInfo, site: SiteContext) -> bool:
        """Whether file ``page`` lists at least one URL, read up to it: its
        rows' locations, as its text file lists them (an extension's data is
        fetched only when it gives the URLs, as hreflang does)."""
        locations = iter(self.page_locations(page.number, site, page))
        try:
            return next(locations, None) is not None
        finally:
            # Its rows' cursor (a PostgreSQL read in a transaction) ends here.
            close = getattr(locations, "close", None)
            if close is not None:
                close()

    def compute_layout(self, site: SiteContext, previous: layout.Laid | None = None) -> layout.Laid:
        """The section's files, computed now (``layout.remembered`` keeps them
        with the index; ``previous``: the ones it kept, if any)."""
        return plain.compute_layout(self, site)

    def measured_room(self) -> int:
        """Bytes a measured file's entries are packed to (``MEASURED_FILL``
        of the room within the byte limit)."""
        return int(pagination.room(self.namespaces()) * pagination.MEASURED_FILL)

    def listed_info(self, number: int, site: SiteContext) -> PageInfo | None:
        """File ``number`` as the latest index listed it, when that costs
        less than ``page_info``: for a request that is not conditional, whose
        ``Last-Modified`` may lag a change (a later conditional request asks
        ``page_info``). The default is ``page_info``; ``ModelSection`` answers
        from its kept layout unless ``defines_own_page_info``."""
        return self.page_info(number, site)

    def page_info(self, number: int, site: SiteContext) -> PageInfo | None:
        if self.defines_own_pages:
            return next((p for p in self.index_pages(site) if p.number == number), None)
        return plain.page_info(self, number, site)

    def page_rows(
        self, number: int, site: SiteContext, info: PageInfo | None = None
    ) -> Iterator[list[Row]]:
        """File ``number``'s rows, in batches: each ``(item, absolute URL or
        None, lastmod W3C text or None, URL kwarg values or None)``
        (``render.Row``), what ``page_entries`` writes and the text sitemap
        lists. ``info`` is what ``page_info`` found (its items, here)."""
        return plain.page_rows(self, number, site, info)

    def plain_rows(
        self, items: Sequence[Any], lastmods: Sequence[LastmodValue], site: SiteContext
    ) -> list[Row]:
        # hreflang locates each language version itself; the item's own
        # location (in the active language) may not even exist.
        if self.has_versions():
            urls: list[str | None] = [None] * len(items)
        else:
            urls = self.location_urls(items, site)
        return [
            (item, url, format_w3c(lastmod), None)
            for item, url, lastmod in zip(items, urls, lastmods)
        ]

    def page_entries(
        self, number: int, site: SiteContext, info: PageInfo | None = None
    ) -> Iterator[str]:
        """The page's ``<url>`` entries, kept within the protocol's limits
        (``pagination.FileGuard``)."""
        guard = pagination.FileGuard(
            self.get_name(),
            number,
            pagination.room(self.namespaces()),
            on_full=lambda: layout.forget_sizes(self, site),
        )
        batches = (
            batch
            for rows in self.page_rows(number, site, info)
            for batch in render.entry_batches(self, rows, site)
        )
        return pagination.guarded(batches, guard)

    def lastmod_counts(self, site: SiteContext) -> LastmodCounts:
        """Every URL of the section counted by the day of its lastmod.

        This default reads what the files hold: each file's entries, rendered
        as for the sitemap, so it is exact for any section, at the cost of a
        render of every file. ``ModelSection`` counts in one grouped query.
        """
        counts = LastmodCounts()
        for page in self.index_pages(site):
            for entry in self.page_entries(page.number, site):
                start = entry.find("<lastmod>", entry.index("</loc>"))
                counts.add(None if start < 0 else day_of(entry[start + 9 : start + 19]))
        return counts

    def page_locations(
        self, number: int, site: SiteContext, info: PageInfo | None = None
    ) -> Iterator[str]:
        """The absolute URLs of a page, for the text sitemap: the URLs of
        its ``<url>`` entries, in order.

        Taken from the page's rows (no extension data fetched, no entry
        rendered) unless an extension gives an item its URLs (hreflang) or a
        subclass writes its own entries: then from the rendered entries.
        """
        if self.has_versions() or self.writes_own_entries:
            for entry in self.page_entries(number, site, info):
                start = entry.index("<loc>") + 5
                yield html.unescape(entry[start : entry.index("</loc>", start)])
            return
        for rows in self.page_rows(number, site, info):
            yield from render.listed_urls(self, rows)
