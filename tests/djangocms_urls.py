from __future__ import annotations

from cms.sitemaps import CMSSitemap
from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.contrib.sitemaps.views import sitemap as contrib_sitemap
from django.urls import include, path

urlpatterns = [
    # Ours first, before django CMS's catch-all; CMSSitemap through contrib for comparison.
    path("", include("django_sitemaps_plus.urls")),
    path("admin/", admin.site.urls),
    path("cms-sitemap.xml", contrib_sitemap, {"sitemaps": {"cmspages": CMSSitemap}}),
    *i18n_patterns(path("", include("cms.urls"))),
]
