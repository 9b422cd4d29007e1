"""``PageSection``: a django CMS site's published pages as a sitemap section.

One ``<url>`` per page and public language in which the page has a published
version (djangocms-versioning), with reciprocal ``xhtml:link`` alternates
between the page's listed languages. Files are primary key ranges of the page
table, as for any ``ModelSection``, each sized for a page in every public
language. What is left out (drafts, redirects, restricted or unreachable
pages, page types, other sites' pages, pages an editor took out) and what
``lastmod`` is (the published version's time, the content's and its plugins'
``changed_date``: one SQL expression): docs/djangocms.md.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from cms.models import (
    ACCESS_CHILDREN,
    ACCESS_DESCENDANTS,
    ACCESS_PAGE,
    ACCESS_PAGE_AND_CHILDREN,
    ACCESS_PAGE_AND_DESCENDANTS,
    CMSPlugin,
    Page,
    PageContent,
    PagePermission,
    PageUrl,
    Placeholder,
)
from cms.utils.conf import get_cms_setting
from cms.utils.i18n import get_public_languages
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import Count, Exists, F, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Cast, Length, Substr

from django_sitemaps_plus.contrib.djangocms.images import PluginImages, image_sources, plugin_models
from django_sitemaps_plus.contrib.djangocms.models import PageSitemapSettings
from django_sitemaps_plus.contrib.djangocms.sites import as_cms_site
from django_sitemaps_plus.contrib.pages import (
    PageAlternates,
    PageEntry,
    ReversedPaths,
    alternate_links,
    lastmod_column,
)
from django_sitemaps_plus.engine.blocks import (
    BlockFigures,
    PkPage,
    blocks_filter,
    bounds,
    last_block,
)
from django_sitemaps_plus.engine.lastmod import GreatestIgnoringNulls, day_of, format_w3c, to_utc
from django_sitemaps_plus.engine.reads import fetch_chunks
from django_sitemaps_plus.engine.render import Row
from django_sitemaps_plus.extensions.base import Extension
from django_sitemaps_plus.sections import LastmodCounts, ModelSection
from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")

#: djangocms-versioning's state of the version a visitor sees.
PUBLISHED = "published"
#: A slug no page path needs quoting for (django CMS's ``SLUG_REGEXP``, ASCII).
_PLAIN_PATH = re.compile(r"[0-9A-Za-z\-_./]+")


def all_public_languages() -> list[str]:
    """Every site's public languages: what a page can be listed in (sizing)."""
    site_ids = {key for key in get_cms_setting("LANGUAGES") if isinstance(key, int)}
    site_ids.add(settings.SITE_ID)
    codes: list[str] = []
    for site_id in sorted(site_ids):
        for code in get_public_languages(site_id=site_id):
            if code not in codes:
                codes.append(code)
    return codes


def view_restricted() -> Exists:
    """Page contents whose page anonymous visitors may not view: a
    ``can_view`` permission on the page itself, on its parent for its
    children, or on an ancestor for its descendants (as ``PagePermission``'s
    ``grant_on`` reads)."""
    own = Q(
        page_id=OuterRef("page_id"),
        grant_on__in=[ACCESS_PAGE, ACCESS_PAGE_AND_CHILDREN, ACCESS_PAGE_AND_DESCENDANTS],
    )
    parent = Q(
        page_id=OuterRef("page__parent_id"),
        grant_on__in=[ACCESS_CHILDREN, ACCESS_PAGE_AND_CHILDREN],
    )
    ancestor = Q(
        grant_on__in=[ACCESS_DESCENDANTS, ACCESS_PAGE_AND_DESCENDANTS],
        page__depth__lt=OuterRef("page__depth"),
        _prefix=F("page__path"),
    )
    permissions = (
        PagePermission.objects.filter(can_view=True)
        .annotate(_prefix=Substr(OuterRef("page__path"), 1, Length("page__path")))
        .filter(own | parent | ancestor)
    )
    return Exists(permissions)


def hidden_by_editors() -> Exists:
    """Page contents whose page an editor took out (``show_in_sitemap`` off)."""
    return Exists(
        PageSitemapSettings.objects.filter(
            extended_object_id=OuterRef("page_id"), show_in_sitemap=False
        )
    )


def lastmod_expression() -> Any:
    """A page content's latest real change: its published version's time,
    its own ``changed_date`` and its plugins' (a correlated MAX)."""
    content_type = ContentType.objects.get_for_model(PageContent)
    plugins = (
        CMSPlugin.objects.filter(
            placeholder__content_type=content_type, placeholder__object_id=OuterRef("pk")
        )
        .order_by()
        .values("placeholder__object_id")
        .annotate(_latest=Max("changed_date"))
        .values("_latest")
    )
    return GreatestIgnoringNulls(
        F("versions__modified"),
        F("changed_date"),
        Subquery(plugins, output_field=models.DateTimeField()),
        output_field=models.DateTimeField(),
    )


class PageSection(ModelSection):
    """The published, public pages of the request's site, per language.
    Registered as section ``"pages"`` by the integration's ``sitemaps``
    module; unregister it (``site.unregister("pages")``) and register a
    subclass to change an option.
    """

    name = "pages"
    #: The language whose version ``x-default`` names; None: no x-default.
    x_default: str | None = None
    #: Plugin model label -> field names whose values are images (a filer
    #: image, a file or a URL), beside plugins that name their own
    #: (``sitemap_image_fields`` or ``sitemap_images()``); see ``PluginImages``.
    image_plugins: dict[str, Sequence[str]] = {}

    def __init__(self, model: type[models.Model] | None = None, **options: Any) -> None:
        super().__init__(model or Page, **options)
        extensions = list(self.extensions) if "extensions" in options else self.default_extensions()
        extensions.insert(0, PageAlternates(all_public_languages, "CMS_LANGUAGES"))
        self.extensions = extensions

    def default_extensions(self) -> list[Extension]:
        """``PluginImages`` when a plugin names its images (or ``image_plugins`` does)."""
        if image_sources(self.image_plugins):
            return [PluginImages(self.image_plugins)]
        return []

    @property
    def invalidated_by(self) -> list[type[models.Model]]:  # type: ignore[override]
        """Pages, their contents, URLs, view permissions, placeholders,
        plugins, versions, sites and editors' settings."""
        # Not at the top: without these apps the module still loads (E141 says so).
        from django.contrib.sites.models import Site
        from djangocms_versioning.models import Version

        return [
            Page,
            PageContent,
            PageUrl,
            PagePermission,
            Placeholder,
            Version,
            Site,
            PageSitemapSettings,
            *plugin_models(),
        ]

    # Which pages --------------------------------------------------------------

    def contents(self, site: Any = None) -> models.QuerySet[Any]:
        """The listed page contents: published, in a public language, no
        redirect, on ``site`` (every site's with None), viewable by anyone,
        reachable and not taken out by an editor; ``_path`` is the page's
        path in the content's language."""
        queryset: models.QuerySet[Any] = PageContent._base_manager.filter(
            versions__state=PUBLISHED,
            page__is_page_type=False,
            page__login_required=False,
        ).filter(Q(redirect="") | Q(redirect__isnull=True))
        if site is None:
            queryset = queryset.filter(language__in=all_public_languages())
        else:
            site = as_cms_site(site)
            languages = get_public_languages(site_id=site.pk)  # CMS_LANGUAGES
            queryset = queryset.filter(page__site=site, language__in=languages)
        if get_cms_setting("PUBLIC_FOR") != "all":
            # Only staff may see pages at all: nothing is public.
            nothing: models.QuerySet[Any] = queryset.none()
            return nothing
        if get_cms_setting("PERMISSION"):
            queryset = queryset.exclude(view_restricted())
        path = PageUrl.objects.filter(page_id=OuterRef("page_id"), language=OuterRef("language"))
        listed: models.QuerySet[Any] = (
            queryset.exclude(hidden_by_editors())
            .annotate(_path=Subquery(path.values("path")[:1]))
            .filter(_path__isnull=False)
        )
        return listed

    def get_queryset(self, site: Any = None) -> models.QuerySet[Any]:
        """The pages with at least one listed content (lazy: no query runs
        until the queryset does)."""
        pages: models.QuerySet[Any] = self.get_model()._default_manager.filter(
            pk__in=self.contents(site).values("page_id")
        )
        return pages

    # Sizing -------------------------------------------------------------------

    def urls_per_item(self) -> int:
        """A page gives one ``<url>`` per public language."""
        return max(1, len(all_public_languages())) * super().urls_per_item()

    # Index --------------------------------------------------------------------

    def _contents_for(self, site: SiteContext | None) -> models.QuerySet[Any]:
        return self.contents(site.site if site is not None else None)

    def last_block(self, site: SiteContext, width: int) -> int:
        """The block of the largest page key with a listed content."""
        return last_block(self._contents_for(site), width, "page_id")

    def block_figures(
        self,
        site: SiteContext,
        width: int,
        last: int,
        only: Collection[int] | None = None,
        past: int = 0,
    ) -> dict[int, BlockFigures]:
        """The listed contents per block of their page's key (of the blocks
        ``only`` and past ``past``, when given): one query."""
        contents = self._contents_for(site).filter(page_id__lte=last * width)
        if only is not None:
            contents = contents.filter(blocks_filter(only, past, width, "page_id"))
        rows = (
            contents.order_by()
            .annotate(_sitemaps_page=PkPage(width, "page_id"))
            .values("_sitemaps_page")
            .annotate(_n=Count("pk"), _s=Sum("page_id"), _m=Max(lastmod_expression()))
            .order_by("_sitemaps_page")
        )
        return {row["_sitemaps_page"]: _content_figures(row) for row in rows}

    def range_figures(
        self, site: SiteContext, after: int | None, last: int, key_sum: bool = False
    ) -> BlockFigures | None:
        sums = {"_s": Sum("page_id")} if key_sum else {}
        found = (
            self._contents_for(site)
            .filter(**bounds(after, last, "page_id"))
            .aggregate(_n=Count("pk"), _m=Max(lastmod_expression()), **sums)
        )
        return _content_figures(found) if found["_n"] else None

    def figure_urls(self, figures: BlockFigures) -> int:
        # A content is one URL.
        return figures.count

    def layout_key(self, row: Row) -> int:
        entry = row[0]
        assert isinstance(entry, PageEntry) and entry.key is not None
        return entry.key

    def lastmod_counts(self, site: SiteContext) -> LastmodCounts:
        """The listed contents (one URL each) by the UTC day of their lastmod: one query."""
        rows = (
            self._contents_for(site)
            .order_by()
            .annotate(_sitemaps_day=Cast(lastmod_expression(), models.DateField()))
            .values("_sitemaps_day")
            .annotate(_n=Count("pk"))
            .values_list("_sitemaps_day", "_n")
        )
        counts = LastmodCounts()
        for value, number in rows:
            counts.add(day_of(value), number)
        return counts

    # Rows ---------------------------------------------------------------------

    def location(self, item: Any) -> str:
        """The URL of a listed entry (a page content, in its language), or of
        a page or page key in the active language (IndexNow has one at hand)."""
        if isinstance(item, PageEntry):
            content = PageContent._base_manager.select_related("page").get(pk=item.pk)
            return str(content.page.get_absolute_url(content.language) or "")
        page = item if isinstance(item, Page) else Page.objects.get(pk=item)
        return str(page.get_absolute_url() or "")

    def range_rows(self, after: int | None, last: int, site: SiteContext) -> Iterator[list[Row]]:
        """The contents of the pages with ``after < key <= last``, a page's
        languages in one batch."""
        contents = self._contents_for(site).filter(**bounds(after, last, "page_id"))
        lastmod, in_sql = lastmod_column(lastmod_expression(), contents.db)
        rows = contents.order_by("page_id", "language").values_list(
            "pk", "page_id", "language", "_path", "page__is_home", lastmod
        )
        locator = _Locator(self, site)
        pending: list[tuple[Any, ...]] = []
        for chunk in fetch_chunks(rows):
            # A page's languages stay in one batch: its alternates need them all.
            last_page = chunk[-1][1]
            complete = [row for row in pending + chunk if row[1] != last_page]
            pending = [row for row in pending + chunk if row[1] == last_page]
            if complete:
                yield locator.rows(complete, in_sql)
        if pending:
            yield locator.rows(pending, in_sql)


class _Locator:
    """URLs and alternates of one request's page contents, a batch at a time."""

    def __init__(self, section: PageSection, site: SiteContext) -> None:
        self.section = section
        self.site = site
        self.paths = ReversedPaths("pages-details-by-slug", _PLAIN_PATH, kwarg="slug")

    def rows(self, batch: Sequence[tuple[Any, ...]], in_sql: bool) -> list[Row]:
        urls: list[str | None] = []
        versions: dict[int, list[tuple[str, str]]] = {}
        for _pk, page_id, language, path, is_home, _lastmod in batch:
            if is_home:
                located = self.paths.named(language, "pages-root")
            else:
                located = self.paths.path(language, path)
            url = None if located is None else self.site.absolute(located)
            if url is None:
                logger.warning(
                    "Sitemap section %r: page %s has no URL in %r; not listed.",
                    self.section.get_name(),
                    page_id,
                    language,
                )
            else:
                versions.setdefault(page_id, []).append((language, url))
            urls.append(url)
        alternates = {
            page_id: alternate_links(found, self.section.x_default, minimum=1)
            for page_id, found in versions.items()
        }
        out: list[Row] = []
        for (pk, page_id, _language, _path, _home, raw), url in zip(batch, urls):
            lastmod = raw if in_sql else format_w3c(raw)
            entry = PageEntry(pk, alternates.get(page_id, ""), key=page_id)
            out.append((entry, url, lastmod, None))
        return out


def _content_figures(row: dict[str, Any]) -> BlockFigures:
    # A published content always has a lastmod (its version's, at least).
    return BlockFigures(row["_n"], int(row.get("_s") or 0), to_utc(row["_m"]), False)
