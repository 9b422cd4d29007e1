"""``ContribSection``: an unchanged ``django.contrib.sitemaps.Sitemap``
served by this app, its pages from the sitemap's own paginator and its
entries from its ``get_urls()``, written by the same entry writer as every
section's."""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cached_property
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from django.apps import apps
from django.contrib.sites.requests import RequestSite
from django.contrib.sites.shortcuts import get_current_site
from django.core.checks import CheckMessage
from django.db import models

from django_sitemaps_plus import names, protocol
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.engine.lastmod import format_w3c, latest_of_all
from django_sitemaps_plus.engine.location import absolute_location
from django_sitemaps_plus.extensions.hreflang import XHTML_PREFIX, alternate_link
from django_sitemaps_plus.sections import PageInfo, Section
from django_sitemaps_plus.sections.checks import SectionChecks
from django_sitemaps_plus.sites import SiteContext

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap
    from django.core.paginator import Paginator

logger = logging.getLogger("django_sitemaps_plus")


#: The stand-in location of an item whose ``location()`` raised.
_BROKEN = "/sitemaps-plus-broken-item\x00/"


class _ContribSite:
    """The ``site`` contrib's ``get_urls()`` receives: what contrib's views
    pass (the current ``Site``, or a ``RequestSite``), with the domain of the
    response's URLs (``BASE_URL`` may name another host than the Site's).

    Used when the site is not a saved model instance (``_contrib_site``):
    ``domain`` is all contrib itself reads; any other attribute (``pk``,
    ``name``) is the real site's, looked up only when read.
    """

    def __init__(self, site: SiteContext) -> None:
        self.domain = site.netloc
        self._context = site

    @cached_property
    def _site(self) -> Any:
        found = self._context.site
        if found is not None and hasattr(found, "domain"):
            return found
        request = self._context.request
        if apps.is_installed("django.contrib.sites"):
            return get_current_site(request)
        if request is not None:
            return RequestSite(request)
        return SimpleNamespace(domain=self.domain, name=self.domain)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._site, name)

    def __repr__(self) -> str:
        return f"<site {self.domain}>"


def _contrib_site(site: SiteContext) -> Any:
    """The site handed to a contrib sitemap's ``get_urls()``.
    A saved site model instance (a Sites framework ``Site``) is handed as a
    copy carrying the response's domain, so the sitemap may filter by it
    (django CMS's ``CMSSitemap`` filters ``PageUrl`` rows by ``site``); any
    other site goes through the lazy stand-in.
    """
    found = site.site
    if isinstance(found, models.Model) and found.pk is not None and hasattr(found, "domain"):
        own = copy.copy(found)
        own.domain = site.netloc
        return own
    return _ContribSite(site)


class ContribSectionChecks(SectionChecks):
    """The options' checks, then what the sitemap's items say (W001, W008)."""

    def check(self, section: Section) -> list[CheckMessage]:
        sitemap = cast(ContribSection, section).sitemap
        # Contrib's own calls: (item, language) pairs when i18n is on.
        items = getattr(sitemap, "_items", sitemap.items)
        locate = getattr(sitemap, "_location", sitemap.location)
        return [
            *self.options(section),
            *self.unordered(section, sitemap.items),
            *self.locations(section, items, locate),
        ]


class ContribSection(Section):
    """An unchanged ``django.contrib.sitemaps.Sitemap``, served by this app.
    Pages follow the sitemap's own paginator (``limit``); locations, lastmod,
    changefreq, priority and i18n alternates come from its ``get_urls()``.
    Unlike contrib, each file's lastmod in the index is the latest of that
    file's URLs (which costs a pass over the items when ``lastmod`` is set).
    """

    checks_class: ClassVar[type[SectionChecks]] = ContribSectionChecks

    XHTML_PREFIX: ClassVar[str] = XHTML_PREFIX
    #: Pages follow the sitemap's paginator; entries come from its ``get_urls()``.
    defines_own_pages: ClassVar[bool] = True
    writes_own_entries: ClassVar[bool] = True
    defines_own_page_info: ClassVar[bool] = True

    def __init__(self, sitemap: Sitemap[Any] | type[Sitemap[Any]], **options: Any) -> None:
        sitemap_class = sitemap if isinstance(sitemap, type) else type(sitemap)
        named = getattr(sitemap_class, "invalidated_by", None)
        if "invalidated_by" not in options and named:
            options["invalidated_by"] = tuple(named)
        super().__init__(**options)
        #: The registered class (made anew per request, as contrib's views
        #: do), or None when an instance was registered (shared, as in contrib).
        self.sitemap_class: type[Sitemap[Any]] | None = (
            sitemap if isinstance(sitemap, type) else None
        )
        self._shared: Sitemap[Any] | None = None if isinstance(sitemap, type) else sitemap
        self._outside_requests: Sitemap[Any] | None = None

    @property
    def sitemap(self) -> Sitemap[Any]:
        """An instance for what does not vary per request (limit, i18n...)."""
        return self.instance(None)

    def instance(self, site: SiteContext | None) -> Sitemap[Any]:
        """The sitemap for ``site``'s request: the registered instance, or the
        registered class made once per request, as contrib's views do (with
        the request when its ``__init__`` takes one, as Wagtail's does)."""
        if self._shared is not None:
            return self._shared
        assert self.sitemap_class is not None
        request = site.request if site is not None else None
        if request is None:
            if self._outside_requests is None:
                self._outside_requests = self._make(None)
            return self._outside_requests
        made: dict[int, Sitemap[Any]] = request.__dict__.setdefault("_sitemaps_plus_contrib", {})
        if id(self) not in made:
            made[id(self)] = self._make(request)
        return made[id(self)]

    def _make(self, request: Any) -> Sitemap[Any]:
        cls = self.sitemap_class
        assert cls is not None
        init = cls.__init__
        if init is not object.__init__:
            parameters = list(inspect.signature(init).parameters.values())[1:]
            if any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters):
                return cls(request)  # type: ignore[call-arg]
        return cls()

    def get_name(self) -> str:
        if self.name:
            return self.name
        cls = self.sitemap_class or type(self._shared)
        return names.section_name(cls.__name__.removesuffix("Sitemap"), "sitemap")

    def own_site(self, site: SiteContext) -> SiteContext:
        """``site`` with the sitemap's own ``protocol`` when it sets one:
        contrib writes its locations, and the index its files, with it."""
        protocol = getattr(self.instance(site), "protocol", None)
        if protocol and protocol != site.scheme:
            return SiteContext(f"{protocol}://{site.netloc}", site.site, site.request)
        return site

    def get_limit(self) -> int:
        return min(int(self.sitemap.limit), protocol.MAX_URLS_PER_FILE)

    def urls_per_file(self) -> int:
        # Pages are the sitemap's own paginator's pages.
        return self.get_limit()

    def namespaces(self) -> dict[str, str]:
        if getattr(self.sitemap, "alternates", False) or getattr(self.sitemap, "x_default", False):
            return {self.XHTML_PREFIX: protocol.XHTML_NS}
        return {}

    def _urls(self, number: int, site: SiteContext) -> list[dict[str, Any]]:
        """``get_urls()`` of page ``number``, without the items whose location
        raised (each logged): one broken item never breaks the file or index."""
        sitemap = copy.copy(self.instance(site))  # patched below: never the shared one
        for name in ("location", "lastmod"):
            method = getattr(sitemap, name, None)
            if callable(method):
                setattr(sitemap, name, self._tolerant(name, method))
        urls: list[dict[str, Any]] = sitemap.get_urls(
            page=number, site=_contrib_site(site), protocol=site.scheme
        )
        return [u for u in urls if _BROKEN not in u["location"]]

    def _tolerant(self, name: str, method: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def call(item: Any) -> Any:
            try:
                return method(item)
            except Exception:
                logger.warning(
                    "Sitemap section %r: %s(%r) raised; that URL is left out.",
                    self.get_name(),
                    name,
                    item,
                    exc_info=True,
                )
                # A location no real URL has, filtered out after get_urls().
                return _BROKEN if name == "location" else None

        return call

    def _sitemap_has_lastmod(self) -> bool:
        from django.contrib.sitemaps import GenericSitemap

        if (
            isinstance(self.sitemap, GenericSitemap)
            and type(self.sitemap).lastmod is GenericSitemap.lastmod
            and self.sitemap.date_field is None
        ):
            return False  # its lastmod() is None for every item
        return getattr(self.sitemap, "lastmod", None) is not None

    def _paginator(self, site: SiteContext) -> Paginator[Any]:
        """The sitemap's paginator, read once: contrib's ``paginator`` property
        builds a new one (and counts the items again) on every access."""
        paginator: Paginator[Any] = self.instance(site).paginator
        return paginator

    def _info(
        self, paginator: Paginator[Any], number: int, site: SiteContext, keep: bool = False
    ) -> PageInfo:
        """Page ``number``'s figures (its rendered URLs kept with ``keep``);
        without lastmod from the count alone: no row is fetched."""
        if not self._sitemap_has_lastmod():
            page = paginator.page(number)
            return PageInfo(number, None, int(page.end_index() - page.start_index() + 1))
        urls = self._urls(number, site)
        lastmod = latest_of_all([u["lastmod"] for u in urls])
        return PageInfo(number, lastmod, len(urls), prepared=urls if keep else None)

    def index_pages(self, site: SiteContext) -> list[PageInfo]:
        site = self.own_site(site)
        paginator = self._paginator(site)
        num_pages = paginator.num_pages if paginator.count else 0
        return [self._info(paginator, number, site) for number in range(1, num_pages + 1)]

    def page_info(self, number: int, site: SiteContext) -> PageInfo | None:
        site = self.own_site(site)
        paginator = self._paginator(site)
        if number < 1 or number > paginator.num_pages or not paginator.count:
            return None
        return self._info(paginator, number, site, keep=True)

    def page_entries(
        self, number: int, site: SiteContext, info: PageInfo | None = None
    ) -> Iterator[str]:
        site = self.own_site(site)
        urls = info.prepared if info is not None and info.prepared is not None else None
        for url_info in urls if urls is not None else self._urls(number, site):
            item = url_info.get("item")
            url = self._absolute(item, url_info["location"], site)
            children = "".join(self._alternate_links(url_info.get("alternates", ()), site))
            entry = self._entry(
                item,
                url,
                format_w3c(url_info.get("lastmod")),
                children,
                changefreq=url_info.get("changefreq"),
                priority=url_info.get("priority"),
            )
            if entry is not None:
                yield entry

    def _alternate_links(
        self, alternates: Iterable[Mapping[str, str]], site: SiteContext
    ) -> Iterator[str]:
        for alternate in alternates:
            href, _ = absolute_location(alternate["location"], site)
            if href is not None:
                yield alternate_link(xml.escape(alternate["lang_code"]), xml.escape(href))
