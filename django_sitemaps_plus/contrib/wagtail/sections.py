"""``PageSection``: a Wagtail site's pages as a keyset-paginated sitemap section.

The rows are the site's live, public pages (every locale's tree with
``WAGTAIL_I18N_ENABLED``), pages are primary key ranges of the page table as
for any ``ModelSection``, and lastmod is ``last_published_at`` (else the latest
revision's time, as Wagtail's own sitemap has it). Locations
are computed from ``url_path`` and the site's root paths, the way
``Page.get_url_parts`` computes them, without loading a page object; only
page types that override ``get_sitemap_urls``, ``get_url_parts`` or
``get_full_url`` are loaded (``.specific()``, one query per type and batch)
and asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.functions import Cast, Length, Substr
from wagtail.models import Locale, PageViewRestriction, Site, get_page_models, pages

from django_sitemaps_plus.contrib.pages import (
    PageAlternates,
    PageEntry,
    ReversedPaths,
    alternate_links,
    lastmod_column,
)
from django_sitemaps_plus.contrib.wagtail.images import PageImages, declares_images
from django_sitemaps_plus.contrib.wagtail.models import SitemapPageMixin
from django_sitemaps_plus.contrib.wagtail.sites import default_site, page_model
from django_sitemaps_plus.engine.blocks import bounds
from django_sitemaps_plus.engine.lastmod import format_w3c
from django_sitemaps_plus.engine.location import absolute_location
from django_sitemaps_plus.engine.reads import fetch_chunks
from django_sitemaps_plus.engine.render import Row
from django_sitemaps_plus.extensions.base import Extension
from django_sitemaps_plus.sections import ModelSection
from django_sitemaps_plus.sites import SiteContext

#: The methods whose override makes a page type's URLs its own business.
URL_METHODS = ("get_sitemap_urls", "get_url_parts", "get_full_url")
#: What ``wagtail_serve``'s pattern accepts: slugs, each followed by "/".
_SERVE_PATH_RE = re.compile(r"(?:[\w\-]+/)*")


@dataclass(frozen=True)
class SiteRoot:
    """A root of the site's tree: its tree path, url_path and language."""

    path: str
    url_path: str
    language: str


def i18n_enabled() -> bool:
    return bool(getattr(settings, "WAGTAIL_I18N_ENABLED", False))


def content_languages() -> list[str]:
    """Wagtail's content languages (``WAGTAIL_CONTENT_LANGUAGES``, else ``LANGUAGES``)."""
    languages = getattr(settings, "WAGTAIL_CONTENT_LANGUAGES", None) or settings.LANGUAGES
    return [code for code, _ in languages]


def site_roots(site: Any) -> list[SiteRoot]:
    """The roots of ``site``'s trees, longest url_path first: its root page
    and, with ``WAGTAIL_I18N_ENABLED``, each translation of it (as
    ``Site.get_site_root_paths`` lists them)."""
    root = site.root_page
    tree = {"translation_key": root.translation_key} if i18n_enabled() else {"pk": root.pk}
    found = page_model()._base_manager.filter(**tree)
    roots = [
        SiteRoot(*row) for row in found.values_list("path", "url_path", "locale__language_code")
    ]
    return sorted(roots, key=lambda r: len(r.url_path), reverse=True)


def append_slash() -> bool:
    """``WAGTAIL_APPEND_SLASH`` as Wagtail's page URLs use it: read once, when
    ``wagtail.models.pages`` was imported (the setting itself otherwise)."""
    default = getattr(settings, "WAGTAIL_APPEND_SLASH", True)
    return bool(getattr(pages, "WAGTAIL_APPEND_SLASH", default))


class PageSection(ModelSection):
    """The live, public pages of the request's Wagtail site.
    Registered as section ``"pages"`` by the integration's ``sitemaps``
    module; unregister it (``site.unregister("pages")``) and register a
    subclass to change an option.
    """

    name = "pages"
    lastmod_fields: Sequence[str] = ("last_published_at",)
    #: A live page without ``last_published_at`` (published before Wagtail
    #: had the field, or imported): its latest revision's time, as Wagtail's
    #: own ``Page.get_sitemap_urls`` falls back.
    lastmod_fallbacks: Mapping[str, Sequence[str]] = {
        "last_published_at": ("latest_revision_created_at",)
    }
    #: Alias pages (a synced tree's untranslated copies, wagtail-localize)
    #: show another page's content: left out unless True.
    include_aliases: bool = False
    #: Hreflang alternates between a page's live translations; None: with
    #: ``WAGTAIL_I18N_ENABLED``.
    hreflang: bool | None = None
    #: The language whose version ``x-default`` names; None: no x-default.
    x_default: str | None = None
    #: Most ``<url>`` entries one page gives (a ``get_sitemap_urls`` override
    #: listing RoutablePage routes gives several): files are sized for it.
    max_urls_per_page: int = 1

    def __init__(self, model: type[models.Model] | None = None, **options: Any) -> None:
        super().__init__(model or page_model(), **options)
        extensions = list(self.extensions) if "extensions" in options else self.default_extensions()
        # The alternates follow ``hreflang``, whatever else ``extensions`` lists.
        if self.uses_hreflang():
            extensions.insert(
                0, PageAlternates(content_languages, "WAGTAIL_CONTENT_LANGUAGES or LANGUAGES")
            )
        self.extensions = extensions

    def default_extensions(self) -> list[Extension]:
        """``PageImages`` when a page type names its images (``sitemap_image_fields``)."""
        if any(declares_images(model) for model in get_page_models()):
            return [PageImages()]
        return []

    # Which pages --------------------------------------------------------------

    def uses_hreflang(self) -> bool:
        return i18n_enabled() if self.hreflang is None else bool(self.hreflang)

    @property
    def invalidated_by(self) -> list[type[models.Model]]:  # type: ignore[override]
        """Every page type (saves are sent by the specific class), view
        restrictions, sites and locales: the receivers' dependencies."""
        return [*get_page_models(), PageViewRestriction, Site, Locale]

    def get_queryset(self, site: Any = None) -> models.QuerySet[Any]:
        """Live, public pages of ``site``'s trees (every site's with None)."""
        queryset: models.QuerySet[Any] = self.get_model()._default_manager.live()
        if not self.include_aliases:
            queryset = queryset.filter(alias_of__isnull=True)
        if site is None:
            # Outside a request (dependency discovery, IndexNow): lazy, no query
            # runs until the queryset does (tables may not exist yet).
            return hidden_by_editors(queryset.exclude(restricted()))
        site = as_wagtail_site(site)
        if site is None:
            nothing: models.QuerySet[Any] = queryset.none()
            return nothing
        in_tree = Q()
        for root in site_roots(site):
            in_tree |= Q(path__startswith=root.path)
        queryset = queryset.filter(in_tree) if in_tree else queryset.none()
        # Wagtail's public(): the restricted pages read once, then one path
        # prefix test each, which the index's range aggregates use as is.
        queryset = queryset.public()  # type: ignore[attr-defined]
        return hidden_by_editors(queryset)

    # Sizing -------------------------------------------------------------------

    def urls_per_item(self) -> int:
        return max(1, int(self.max_urls_per_page)) * super().urls_per_item()

    # Rows ---------------------------------------------------------------------

    def location(self, item: Any) -> str:
        """A page's full URL (its specific type's ``get_full_url()``), for
        callers with one page at hand (IndexNow); files use ``range_rows``."""
        page = item
        if not isinstance(item, models.Model):
            page = self.get_model()._base_manager.get(pk=self.item_pk(item))
        return str(page.specific_deferred.get_full_url() or "")

    def range_rows(self, after: int | None, last: int, site: SiteContext) -> Iterator[list[Row]]:
        wagtail_site = as_wagtail_site(site.site)
        if wagtail_site is None:
            return
        base = self.site_queryset(site)
        urls = _Locator(self, site, wagtail_site, base)
        spec = self.lastmod_spec
        date_only = not spec.is_datetime
        lastmod, in_sql = lastmod_column(spec.row_expression(), base.db, date_only=date_only)
        rows = (
            base.filter(**bounds(after, last))
            .order_by("pk")
            .values_list("pk", "url_path", "content_type_id", translation_key_text(), lastmod)
        )
        for batch in fetch_chunks(rows):
            yield urls.rows(batch, in_sql)


def translation_key_text() -> Cast:
    """``translation_key`` as the database's text: a grouping key only, so
    no UUID object is built per row (that was a third of a file's time)."""
    return Cast("translation_key", output_field=models.CharField())


def as_wagtail_site(site: Any) -> Any:
    """``site`` when it is a Wagtail ``Site``, else the default one (a custom
    ``SITE_RESOLVER`` may hand a Sites framework site), or None."""
    return site if isinstance(site, Site) else default_site()


def restricted() -> Exists:
    """Pages under a view restriction (on themselves or an ancestor), as a
    subquery: a restricted page's path is a prefix of theirs."""
    restricted = PageViewRestriction.objects.annotate(
        _prefix=Substr(OuterRef("path"), 1, Length("page__path"))
    ).filter(_prefix=F("page__path"))
    return Exists(restricted)


def hidden_by_editors(queryset: models.QuerySet[Any]) -> models.QuerySet[Any]:
    """``queryset`` without the pages an editor took out of the sitemap
    (``SitemapPageMixin.show_in_sitemap`` off): one subquery per page type
    with the mixin."""
    base = queryset.model
    if issubclass(base, SitemapPageMixin):
        shown: models.QuerySet[Any] = queryset.filter(show_in_sitemap=True)
        return shown
    for model in get_page_models():
        if issubclass(model, SitemapPageMixin) and not model._meta.abstract:
            hidden = model._base_manager.filter(show_in_sitemap=False).values("pk")
            queryset = queryset.exclude(pk__in=hidden)
    return queryset


def overrides_urls(model: type[models.Model] | None) -> bool:
    """Whether a page type's URLs come from its own methods (see URL_METHODS)."""
    if model is None:
        return True
    base = page_model()
    return any(getattr(model, name, None) is not getattr(base, name, None) for name in URL_METHODS)


class _Locator:
    """URLs, lastmod and alternates of one request's pages, a batch at a time."""

    def __init__(
        self, section: PageSection, site: SiteContext, wagtail_site: Any, base: Any
    ) -> None:
        self.section = section
        self.site = site
        self.base = base
        self.roots = site_roots(wagtail_site)
        self.append_slash = append_slash()
        self.serve = ReversedPaths("wagtail_serve", _SERVE_PATH_RE, i18n=i18n_enabled())
        self.root_url = str(wagtail_site.root_url)
        self._own_urls: dict[int, bool] = {}

    def _has_own_urls(self, content_type_id: int) -> bool:
        if content_type_id not in self._own_urls:
            model = ContentType.objects.get_for_id(content_type_id).model_class()
            self._own_urls[content_type_id] = overrides_urls(model)
        return self._own_urls[content_type_id]

    def _on_site(self, location: str) -> str:
        """A page's full URL moved onto the SiteContext's base URL (which
        ``BASE_URL`` may set) when it is on the Wagtail site's root URL."""
        if location.startswith(self.root_url) and self.root_url != self.site.base_url:
            rest = location[len(self.root_url) :]
            if not rest or rest.startswith("/"):
                return self.site.base_url + (rest or "/")
        return location

    def _specific_urls(self, keys: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
        """``get_sitemap_urls(request)`` of the pages whose type overrides a URL method."""
        if not keys:
            return {}
        pages = self.section.get_model()._default_manager.filter(pk__in=keys).specific()
        return {page.pk: list(page.get_sitemap_urls(self.site.request)) for page in pages}

    def _url(self, url_path: str) -> str | None:
        """A page's URL on the site (None: not routable there), as
        ``Page.get_url_parts`` gives it: the page's root path cut off, the
        rest reversed with the root's language active under
        ``WAGTAIL_I18N_ENABLED``, the trailing slash removed without
        ``WAGTAIL_APPEND_SLASH``."""
        root = next((r for r in self.roots if url_path.startswith(r.url_path)), None)
        if root is None:
            return None
        path = self.serve.path(root.language, url_path[len(root.url_path) :])
        if path is not None and not self.append_slash and path != "/":
            path = path.rstrip("/")
        return None if path is None else self.site.absolute(path)

    def _translations(
        self, batch: Sequence[tuple[Any, ...]], own: dict[int, list[dict[str, Any]]]
    ) -> dict[Any, list[tuple[str, str]]]:
        """translation_key -> (language, URL) of each live public translation on the site."""
        keys = {row[3] for row in batch}
        # Two steps: the translations by key (its unique index), then those the
        # section lists. In one query SQLite scans the alias_of index instead
        # (4x slower on 200,000 pages).
        candidates = self.section.get_model()._base_manager.filter(translation_key__in=keys)
        members = list(
            self.base.filter(pk__in=list(candidates.values_list("pk", flat=True))).values_list(
                "pk",
                "url_path",
                "content_type_id",
                translation_key_text(),
                "locale__language_code",
            )
        )
        special = [m[0] for m in members if self._has_own_urls(m[2]) and m[0] not in own]
        own = {**own, **self._specific_urls(special)}
        groups: dict[Any, list[tuple[str, str]]] = {}
        for pk, url_path, content_type_id, key, language in members:
            if self._has_own_urls(content_type_id):
                listed = own.get(pk) or []
                url = self._checked(pk, listed[0]["location"]) if listed else None
            else:
                url = self._url(url_path)
            if url is not None:
                groups.setdefault(key, []).append((language, url))
        return groups

    def _checked(self, pk: int, location: str | None) -> str | None:
        if not location:
            return None
        url, why = absolute_location(self._on_site(location), self.site)
        if url is None:
            self.section.drop_item(PageEntry(pk), why or "is invalid")
        return url

    def rows(self, batch: Sequence[tuple[Any, ...]], in_sql: bool) -> list[Row]:
        own = self._specific_urls([row[0] for row in batch if self._has_own_urls(row[2])])
        groups = self._translations(batch, own) if self.section.uses_hreflang() else {}
        out: list[Row] = []
        for pk, url_path, content_type_id, key, raw_lastmod in batch:
            lastmod = raw_lastmod if in_sql else format_w3c(raw_lastmod)
            alternates = alternate_links(groups.get(key, []), self.section.x_default)
            if not self._has_own_urls(content_type_id):
                entry = PageEntry(pk, alternates, content_type_id)
                out.append((entry, self._url(url_path), lastmod, None))
                continue
            for position, info in enumerate(own.get(pk, [])):
                url = self._checked(pk, info.get("location"))
                if url is not None:
                    first = position == 0
                    entry = PageEntry(pk, alternates if first else "", content_type_id, first)
                    dated = info.get("lastmod")  # the route's own, else the page's
                    out.append((entry, url, lastmod if dated is None else format_w3c(dated), None))
        return out
