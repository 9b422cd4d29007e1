"""Include with ``path("", include("django_sitemaps_plus.urls"))``.

The include may come first in a project's URLconf: ``/robots.txt`` and the
IndexNow key file only match while they are switched on (read per request, so
``override_settings`` works), and otherwise fall through to the project's own
patterns; ``/security.txt`` and the like never match here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import URLPattern, path, register_converter
from django.urls.converters import IntConverter, StringConverter
from django.urls.resolvers import ResolverMatch, RoutePattern

from django_sitemaps_plus import indexnow, names, protocol, stylesheet, views
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.registry import site

app_name = "sitemaps_plus"


class PageConverter(IntConverter):
    """A page number: 1, 2, ... (no sign, no leading zero), so a malformed
    page is a 404 before any query."""

    regex = names.PAGE_PATTERN


class SectionConverter(StringConverter):
    """A section name: a lowercase slug (``names.SECTION_NAME_PATTERN``)."""

    # Lazy: in ``sitemap-<section>-<page>.xml`` the name stops before "-<page>".
    regex = f"{names.SECTION_NAME_PATTERN}?"


class RegisteredSectionConverter(StringConverter):
    """The name of a registered section, and nothing else: contrib's old
    file URLs (``/sitemap-<section>.xml``) match only for real sections, so
    the project's other ``sitemap-*.xml`` URLs are not shadowed."""

    regex = SectionConverter.regex

    def to_python(self, value: str) -> str:

        if value not in site:
            raise ValueError("not a registered section")
        return value


class IndexNowKeyConverter(StringConverter):
    """The configured IndexNow key, and nothing else.
    The regex admits any key (8 to 128 of a-z, A-Z, 0-9 and '-'); ``to_python``
    refuses every other value, which makes Django try the next pattern, so
    ``/security.txt`` reaches the project's own view.
    """

    regex = protocol.INDEXNOW_KEY_RE.pattern

    def to_python(self, value: str) -> str:
        if not conf.INDEXNOW_KEY or value != conf.INDEXNOW_KEY:
            raise ValueError("not the IndexNow key")
        return value


class SwitchedURLPattern(URLPattern):
    """A pattern that matches only while ``enabled()`` is true."""

    def __init__(
        self,
        route: str,
        view: Callable[..., Any],
        *,
        name: str,
        enabled: Callable[[], bool],
    ) -> None:
        super().__init__(RoutePattern(route, name=name, is_endpoint=True), view, name=name)
        self.enabled = enabled

    def resolve(self, path: str) -> ResolverMatch | None:
        if not self.enabled():
            return None
        return super().resolve(path)


register_converter(PageConverter, "sitemap_page")
register_converter(SectionConverter, "sitemap_section")
register_converter(IndexNowKeyConverter, "indexnow_key")
register_converter(RegisteredSectionConverter, "sitemap_registered_section")

urlpatterns = [
    path("sitemap.xml", views.index, name="index"),
    path("sitemap.txt", views.text, name="text"),
    path("sitemap.xsl", stylesheet.stylesheet, name="stylesheet"),
    path(
        "sitemap-<sitemap_section:section>-<sitemap_page:page>.xml",
        views.section,
        name="section",
    ),
    path(
        "sitemap-<sitemap_section:section>-<sitemap_page:page>.txt",
        views.section_txt,
        name="section_txt",
    ),
    # django.contrib.sitemaps' file URLs (?p=N for later pages): 301 to ours,
    # so sitemaps already submitted to search engines keep working.
    path(
        "sitemap-<sitemap_registered_section:section>.xml",
        views.legacy_section,
        name="legacy_section",
    ),
    # Only with SITEMAPS_PLUS["ROBOTS_TXT"] on; otherwise the project's own.
    SwitchedURLPattern(
        "robots.txt", views.robots_txt, name="robots_txt", enabled=lambda: conf.ROBOTS_TXT
    ),
    # Only SITEMAPS_PLUS["INDEXNOW_KEY"] + ".txt" (see IndexNowKeyConverter).
    path("<indexnow_key:key>.txt", indexnow.key_file, name="indexnow_key"),
]
