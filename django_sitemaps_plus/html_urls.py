"""The HTML sitemap for visitors: include it under a prefix of its own.

    path("sitemap/", include("django_sitemaps_plus.html_urls"))

``sitemap/`` lists the sections, ``sitemap/<section>/`` is a section's first
page of links and ``sitemap/<section>/<n>/`` its later pages. Kept apart
from ``django_sitemaps_plus.urls`` (which may be included at the site's root,
first) so that it can never shadow a page of the project: every pattern here
is under the prefix the project chooses.
"""

from __future__ import annotations

from django.urls import path

from django_sitemaps_plus import html_sitemap
from django_sitemaps_plus.urls import PageConverter, SectionConverter  # noqa: F401 (registers them)

app_name = html_sitemap.APP_NAME

urlpatterns = [
    path("", html_sitemap.index, name="index"),
    path("<sitemap_section:section>/", html_sitemap.section, name="section"),
    path("<sitemap_section:section>/1/", html_sitemap.first_page, name="first_page"),
    path(
        "<sitemap_section:section>/<sitemap_page:page>/",
        html_sitemap.section,
        name="section_page",
    ),
]
