"""URLconf of the example site."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    # /sitemap.xml, its sections and pages (app_name "sitemaps_plus").
    path("", include("django_sitemaps_plus.urls")),
    path("", include("pages.urls")),
    path("blog/", include("blog.urls")),
    path("shop/", include("shop.urls")),
    path("admin/", admin.site.urls),
]
