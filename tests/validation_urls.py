"""A URLconf without the sitemaps_plus URLs, for validate_sitemaps' usage error."""

from __future__ import annotations

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
