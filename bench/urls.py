"""The article detail URL, contrib's sitemap views and ours side by side.

- ``/articles/<slug>/``: the article detail page each sitemap lists
- ``/contrib/sitemap.xml``: contrib's index of the sitemap with a ``lastmod()`` method
- ``/contrib/generic/sitemap.xml``: contrib's index of a ``GenericSitemap``
- ``/contrib/sitemap-<section>.xml?p=N``: contrib's pages
- ``/sitemap.xml``, ``/sitemap-<section>-<page>.xml``: ours
- ``/sitemap/``: ours, the HTML sitemap for visitors (bench/bench_html_sitemap.py)
"""

from __future__ import annotations

from django.contrib.sitemaps import views as contrib_views
from django.http import HttpRequest, HttpResponse
from django.urls import include, path

from bench.benchapp.sitemaps import CONTRIB_GENERIC, CONTRIB_SITEMAPS, CONTRIB_WITH_LASTMOD


def article(request: HttpRequest, slug: str) -> HttpResponse:
    return HttpResponse(slug)


urlpatterns = [
    path("articles/<slug:slug>/", article, name="article"),
    path(
        "contrib/sitemap.xml",
        contrib_views.index,
        {"sitemaps": CONTRIB_WITH_LASTMOD, "sitemap_url_name": "contrib-section"},
        name="contrib-index",
    ),
    path(
        "contrib/generic/sitemap.xml",
        contrib_views.index,
        {"sitemaps": CONTRIB_GENERIC, "sitemap_url_name": "contrib-section"},
        name="contrib-generic-index",
    ),
    path(
        "contrib/sitemap-<section>.xml",
        contrib_views.sitemap,
        {"sitemaps": CONTRIB_SITEMAPS},
        name="contrib-section",
    ),
    path("sitemap/", include("django_sitemaps_plus.html_urls")),
    path("", include("django_sitemaps_plus.urls")),
]
