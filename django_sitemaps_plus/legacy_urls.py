"""django.contrib.sitemaps' URL names, for a site migrating from it.

``path("", include("django_sitemaps_plus.legacy_urls"))`` beside (after) the
app's own include keeps ``{% url "django.contrib.sitemaps.views.sitemap"
section="blog" %}`` and ``reverse("django.contrib.sitemaps.views.index")``
working: the index is the app's, and a contrib file URL redirects
permanently to the new file (docs/migration.md).
"""

from __future__ import annotations

from django.urls import path

from django_sitemaps_plus import urls as _converters  # noqa: F401  (registers the converters)
from django_sitemaps_plus import views

urlpatterns = [
    path("sitemap.xml", views.index, name="django.contrib.sitemaps.views.index"),
    path(
        "sitemap-<sitemap_registered_section:section>.xml",
        views.legacy_section,
        name="django.contrib.sitemaps.views.sitemap",
    ),
]
