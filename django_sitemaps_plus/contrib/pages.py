"""What the CMS integrations share: page entries, page URLs, computed
alternates, invalidation, editor exclusion and page images.

Both ``contrib.wagtail`` and ``contrib.djangocms`` list a CMS's pages per
site (``ReversedPaths`` locates them), each ``<url>`` carrying hreflang
alternates the section computed for the whole batch (``PageEntry.alternates``,
written by ``PageAlternates``); both invalidate on the CMS's own signals
(``invalidate_pages``), let editors take a page out (``show_in_sitemap_field``)
and list a page's images through the core ``Images`` writer (``PageImagesBase``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from django.conf import settings
from django.core.checks import CheckMessage
from django.core.exceptions import FieldDoesNotExist
from django.db import connections, models, router
from django.urls import NoReverseMatch, reverse
from django.utils import translation
from django.utils.http import RFC3986_SUBDELIMS
from django.utils.translation import gettext_lazy as _

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.engine.lastmod import SQL_FORMAT_VENDORS, W3CDatetime
from django_sitemaps_plus.extensions.base import Extension, section_error
from django_sitemaps_plus.extensions.hreflang import (
    LINK_TAGS_BYTES,
    X_DEFAULT,
    XHTML_PREFIX,
    alternate_link,
    hreflang_code,
)
from django_sitemaps_plus.extensions.images import DEFAULT_MAX_PER_URL, Images
from django_sitemaps_plus.receivers import invalidate_after_commit
from django_sitemaps_plus.registry import site

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")

#: The path a page URL pattern is reversed with, to be split around.
_MARKER = "sitemaps-plus-path/"


@dataclass(eq=False)
class PageEntry:
    """One ``<url>`` of a page: the item a CMS section's rows carry."""

    pk: int
    #: The ``xhtml:link`` alternates written in this entry ("" for none).
    alternates: str = ""
    content_type_id: int | None = None
    #: False for further entries of a page (Wagtail's RoutablePage routes):
    #: they carry no alternates and no images.
    primary: bool = True
    #: The key its section lays it out by, when not ``pk`` (django CMS: the
    #: page's, for a page content's entry).
    key: int | None = None

    def __repr__(self) -> str:
        return f"<page {self.pk}>"


def lastmod_column(expression: Any, using: str, *, date_only: bool = False) -> tuple[Any, bool]:
    """The rows' lastmod column, and whether it is W3C text (formatted in SQL
    where the database can, as ``LastmodSpec.text_expression``)."""
    in_sql = settings.USE_TZ and connections[using].vendor in SQL_FORMAT_VENDORS
    return (W3CDatetime(expression, date_only=date_only) if in_sql else expression), in_sql


class ReversedPaths:
    """A CMS's page URL pattern ``name`` (taking a page's path as its
    argument, or ``kwarg``), reversed once per language (active with
    ``i18n``) and split around the path: a path ``plain`` matches is filled
    in and quoted as ``reverse()`` would; any other is reversed."""

    def __init__(
        self, name: str, plain: re.Pattern[str], *, kwarg: str = "", i18n: bool = True
    ) -> None:
        self.name = name
        self.plain = plain
        self.kwarg = kwarg
        self.i18n = i18n
        self._named: dict[tuple[str, str], str | None] = {}
        self._templates: dict[str, list[str] | None] = {}

    def reverse(self, language: str, name: str, *args: str) -> str | None:
        kwargs = {self.kwarg: args[0]} if self.kwarg and args else None
        try:
            with translation.override(language) if self.i18n else nullcontext():
                return reverse(name, args=None if kwargs else args, kwargs=kwargs)
        except NoReverseMatch:
            return None

    def named(self, language: str, name: str) -> str | None:
        """The URL named ``name`` (it takes no argument), once per language."""
        if (language, name) not in self._named:
            self._named[language, name] = self.reverse(language, name)
        return self._named[language, name]

    def path(self, language: str, path: str) -> str | None:
        if language not in self._templates:
            url = self.reverse(language, self.name, _MARKER)
            self._templates[language] = url.split(_MARKER, 1) if url and _MARKER in url else None
        template = self._templates[language]
        if template is None or not self.plain.fullmatch(path):
            return self.reverse(language, self.name, path)
        # An ASCII match of the pattern has nothing to quote.
        quoted = path if path.isascii() else quote(path, safe=RFC3986_SUBDELIMS + "/~:@")
        return template[0] + quoted + template[1]


def invalidate_pages(
    kind: type[Section], model: type[models.Model], failed: str, *args: Any
) -> None:
    """Invalidate the registered ``kind`` sections (a ``PageSection``) after a
    CMS operation on ``model`` that sends no model signal; a failure is only
    logged (``failed % args``): a sitemap problem must never break a publish."""
    try:
        names = {section.get_name() for section in site if isinstance(section, kind)}
        if names:
            invalidate_after_commit(names, router.db_for_write(model))
    except Exception:
        logger.exception(failed, *args)


def alternate_links(
    versions: Iterable[tuple[str, str]], x_default: str | None = None, *, minimum: int = 2
) -> str:
    """``xhtml:link`` alternates for a page's (language, absolute URL) versions.

    Sorted by language, each page's own URL among them; with ``x_default`` the
    version in that language is named again as ``x-default``. Fewer than
    ``minimum`` versions give none ("" : Wagtail leaves an untranslated page
    without alternates, django CMS lists a single-language page's own).
    """
    versions = sorted(versions)
    if len(versions) < max(1, minimum):
        return ""
    links = [alternate_link(hreflang_code(language), xml.escape(url)) for language, url in versions]
    if x_default:
        for language, url in versions:
            if language == x_default:
                links.append(alternate_link(X_DEFAULT, xml.escape(url)))
                break
    return "".join(links)


class PageAlternates(Extension):
    """The ``xhtml:link`` alternates a CMS section computed for each entry
    (``PageEntry.alternates``).

    ``languages`` gives the languages a page can have (sizing and the
    ``x_default`` check); ``setting`` names where they are configured.
    """

    prefix: ClassVar[str] = XHTML_PREFIX
    namespace: ClassVar[str] = protocol.XHTML_NS

    def __init__(self, languages: Callable[[], Sequence[str]], setting: str) -> None:
        self.languages = languages
        self.setting = setting

    def max_bytes(self, section: Any) -> int:
        codes = list(self.languages())
        links = len(codes) + (1 if section.x_default else 0)
        longest = max([len(hreflang_code(c)) for c in codes] + [len(X_DEFAULT)])
        loc: int = section.loc_budget()
        return links * (LINK_TAGS_BYTES + longest + loc)

    def children(self, section: Any, item: Any, data: Any, site: SiteContext) -> str:
        return str(item.alternates)

    def check(self, section: Any) -> list[CheckMessage]:
        default = section.x_default
        if default and default not in self.languages():
            message = f"x_default={default!r} is not one of the site's languages ({self.setting})."
            hint = f"One of {self.setting}, or None."
            return [section_error(section, message, "sitemaps_plus.E102", hint)]
        return []


def model_field(model: type[models.Model], name: str) -> Any:
    """``model``'s field ``name``, or None when it has none."""
    try:
        return model._meta.get_field(name)
    except FieldDoesNotExist:
        return None


def show_in_sitemap_field() -> models.BooleanField[bool, bool]:
    """The "Show in sitemap" checkbox editors uncheck to leave a page out."""
    return models.BooleanField(
        _("show in sitemap"),
        default=True,
        help_text=_("Whether a link to this page is listed in the XML sitemap."),
    )


class PageImagesBase(Images):
    """``image:image`` for each primary page entry, from ``images_of``.

    A CMS integration subclasses it and implements ``images_of(entries)``:
    the images (files, URLs or paths) of each entry, by ``PageEntry.pk``, in
    a constant number of queries per batch. Writing, de-duplication and
    ``max_per_url`` are ``Images``'.
    """

    def __init__(self, *, max_per_url: int = DEFAULT_MAX_PER_URL) -> None:
        self.field = None
        self.method = None
        self.prefetch = []
        self.max_per_url = max_per_url

    def images_of(self, entries: Sequence[PageEntry]) -> dict[int, list[Any]]:
        raise NotImplementedError

    def fetch(self, section: Section, items: Sequence[Any]) -> Sequence[Any]:
        primary = [item for item in items if getattr(item, "primary", True)]
        found = self.images_of(primary) if primary else {}
        return [found.get(item.pk, []) if getattr(item, "primary", True) else [] for item in items]
