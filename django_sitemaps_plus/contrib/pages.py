"""What the CMS integrations share: page entries, computed alternates,
editor exclusion and page images.

Both ``contrib.wagtail`` and ``contrib.djangocms`` list a CMS's pages per
site, each ``<url>`` carrying hreflang alternates the section computed for
the whole batch (``PageEntry.alternates``, written by ``PageAlternates``);
both let editors take a page out (``show_in_sitemap_field``) and list a
page's images through the core ``Images`` writer (``PageImagesBase``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from django.core.checks import CheckMessage
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.utils.translation import gettext_lazy as _

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.extensions.base import Extension, section_error
from django_sitemaps_plus.extensions.hreflang import (
    LINK_TAGS_BYTES,
    X_DEFAULT,
    XHTML_PREFIX,
    alternate_link,
    hreflang_code,
)
from django_sitemaps_plus.extensions.images import DEFAULT_MAX_PER_URL, Images
from django_sitemaps_plus.registry import site

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext


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


def registered_names(kind: type[Section]) -> set[str]:
    """Names of the registered sections of class ``kind`` (a ``PageSection``)."""
    return {section.get_name() for section in site if isinstance(section, kind)}


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
