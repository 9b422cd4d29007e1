"""Django's contrib sitemap views and ours, side by side, on the same sitemaps.

``tests/sections/test_contrib_parity.py`` registers the same classes with this app
and fetches both. Contrib's files are ``/contrib/sitemap-<section>.xml``
(``?p=N`` for later pages), ours ``/sitemap-<section>-<N>.xml``.
"""

from __future__ import annotations

from typing import Any

from django.conf.urls.i18n import i18n_patterns
from django.contrib.sitemaps import views as contrib_views
from django.http import HttpRequest, HttpResponse
from django.urls import include, path

#: Filled by each test: section name -> Sitemap class or instance.
SITEMAPS: dict[str, Any] = {}


def page(request: HttpRequest, **kwargs: object) -> HttpResponse:
    return HttpResponse("page")


urlpatterns = [
    path(
        "contrib/sitemap.xml",
        contrib_views.index,
        {"sitemaps": SITEMAPS, "sitemap_url_name": "contrib-section"},
        name="contrib-index",
    ),
    path(
        "contrib/sitemap-<section>.xml",
        contrib_views.sitemap,
        {"sitemaps": SITEMAPS},
        name="contrib-section",
    ),
    path("", include("django_sitemaps_plus.urls")),
    path("articles/<str:slug>/", page, name="article"),
    path("location/", page, name="location"),
    *i18n_patterns(path("i18n/<int:pk>/", page, name="i18n-item")),
]
