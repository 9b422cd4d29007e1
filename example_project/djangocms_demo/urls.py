"""URLconf of the django CMS demo."""

from __future__ import annotations

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    # Before django CMS's catch-all: /sitemap.xml, its files, robots.txt.
    path("", include("django_sitemaps_plus.urls")),
    path("admin/", admin.site.urls),
    # /en/... and /fr/...
    *i18n_patterns(path("", include("cms.urls"))),
]
