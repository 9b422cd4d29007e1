"""The core tests' URLconf plus the Django admin (the sitemap overview)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import path

from tests.urls import urlpatterns as core_patterns

urlpatterns = [path("admin/", admin.site.urls), *core_patterns]
