"""Include with ``path("", include("django_sitemaps_plus.urls"))``."""

from __future__ import annotations

from django.urls import path, register_converter
from django.urls.converters import IntConverter, StringConverter

from django_sitemaps_plus import indexnow, views

app_name = "sitemaps_plus"


class PageConverter(IntConverter):
    """A page number: 1, 2, ... (no sign, no leading zero), so a malformed
    page is a 404 before any query."""

    regex = "[1-9][0-9]{0,8}"


class SectionConverter(StringConverter):
    """A section name: a lowercase slug (see ``registry.SECTION_NAME_RE``)."""

    regex = "[a-z0-9][a-z0-9_-]*?"


class IndexNowKeyConverter(StringConverter):
    """An IndexNow key: 8 to 128 of a-z, A-Z, 0-9 and '-'."""

    regex = indexnow.KEY_RE.pattern


register_converter(PageConverter, "sitemap_page")
register_converter(SectionConverter, "sitemap_section")
register_converter(IndexNowKeyConverter, "indexnow_key")

urlpatterns = [
    path("sitemap.xml", views.index, name="index"),
    path("sitemap.txt", views.text, name="text"),
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
    path("robots.txt", views.robots_txt, name="robots_txt"),
    # Last: the IndexNow key file (a 404 unless SITEMAPS_PLUS["INDEXNOW_KEY"] is it).
    path("<indexnow_key:key>.txt", indexnow.key_file, name="indexnow_key"),
]
