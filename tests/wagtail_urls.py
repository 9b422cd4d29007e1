from __future__ import annotations

from django.conf.urls.i18n import i18n_patterns
from django.urls import include, path
from wagtail import urls as wagtail_urls
from wagtail.contrib.sitemaps.views import sitemap as wagtail_sitemap

urlpatterns = [
    # Ours first, before Wagtail's catch-all; Wagtail's own for comparison.
    path("", include("django_sitemaps_plus.urls")),
    path("wagtail-sitemap.xml", wagtail_sitemap),
    *i18n_patterns(path("", include(wagtail_urls)), prefix_default_language=False),
]
