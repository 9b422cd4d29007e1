"""The core tests' URLconf plus the HTML sitemap under /sitemap/."""

from __future__ import annotations

from django.urls import include, path

from tests.urls import urlpatterns as core_patterns

urlpatterns = [path("sitemap/", include("django_sitemaps_plus.html_urls")), *core_patterns]
