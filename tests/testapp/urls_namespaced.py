"""The sitemap views included twice: at the root (the default instance) and
under ``maps/`` with the instance namespace ``maps``."""

from __future__ import annotations

from django.urls import include, path

from tests.urls import urlpatterns as base_patterns

urlpatterns = [
    path("maps/", include("django_sitemaps_plus.urls", namespace="maps")),
    *base_patterns,
]
