"""URLs of the django CMS benchmark: ours, and CMSSitemap through contrib's views."""

from __future__ import annotations

from cms.sitemaps import CMSSitemap
from django.conf.urls.i18n import i18n_patterns
from django.contrib.sitemaps import views as contrib_views
from django.urls import include, path

SITEMAPS = {"cmspages": CMSSitemap}

urlpatterns = [
    path("", include("django_sitemaps_plus.urls")),
    path(
        "cms-index.xml",
        contrib_views.index,
        {"sitemaps": SITEMAPS, "sitemap_url_name": "cms-sitemap"},
    ),
    path(
        "cms-sitemap-<section>.xml",
        contrib_views.sitemap,
        {"sitemaps": SITEMAPS},
        name="cms-sitemap",
    ),
    *i18n_patterns(path("", include("cms.urls"))),
]
