"""URLs of the Wagtail benchmark: ours beside wagtail.contrib.sitemaps."""

from __future__ import annotations

from django.conf.urls.i18n import i18n_patterns
from django.urls import include, path
from wagtail import urls as wagtail_urls
from wagtail.contrib.sitemaps import Sitemap
from wagtail.contrib.sitemaps import views as wagtail_sitemaps

SITEMAPS = {"pages": Sitemap}

urlpatterns = [
    path("", include("django_sitemaps_plus.urls")),
    path(
        "wagtail-index.xml",
        wagtail_sitemaps.index,
        {"sitemaps": SITEMAPS, "sitemap_url_name": "wagtail-section"},
    ),
    path(
        "wagtail-sitemap-<section>.xml",
        wagtail_sitemaps.sitemap,
        {"sitemaps": SITEMAPS},
        name="wagtail-section",
    ),
    # French at /fr/ when the benchmark has a second locale.
    *i18n_patterns(path("", include(wagtail_urls)), prefix_default_language=False),
]
