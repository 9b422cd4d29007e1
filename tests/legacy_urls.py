"""A project migrated from django.contrib.sitemaps: the app's include, the
contrib URL names, and a contrib view still given a template."""

from __future__ import annotations

from django.contrib.sitemaps import views as contrib_views
from django.urls import include, path

urlpatterns = [
    path("", include("django_sitemaps_plus.urls")),
    path("", include("django_sitemaps_plus.legacy_urls")),
    path("articles/<str:slug>/", lambda request, slug: None, name="article"),
    path(
        "old/sitemap.xml",
        contrib_views.index,
        {"sitemaps": {}, "template_name": "custom_sitemap_index.xml"},
    ),
]
