"""Every sitemap URL of the app at once: its own include, the contrib URL
names of a migrated site, and the HTML sitemap under /sitemap/."""

from __future__ import annotations

from django.urls import include, path

from tests.html_sitemap_urls import urlpatterns as html_patterns

urlpatterns = [*html_patterns, path("", include("django_sitemaps_plus.legacy_urls"))]
