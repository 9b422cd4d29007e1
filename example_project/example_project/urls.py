"""URLconf of the example site."""

from __future__ import annotations

from django.conf import settings
from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.static import serve

urlpatterns = [
    # /sitemap.xml, its sections and pages (app_name "sitemaps_plus").
    path("", include("django_sitemaps_plus.urls")),
    # The HTML sitemap for visitors, in templates/base.html (docs/html-sitemap.md).
    path("sitemap/", include("django_sitemaps_plus.html_urls")),
    # The pages in every language of LANGUAGES: English at /about/, German at
    # /de/about/, French at /fr/about/ (the sitemap lists them with hreflang).
    *i18n_patterns(path("", include("pages.urls")), prefix_default_language=False),
    path("blog/", include("blog.urls")),
    path("shop/", include("shop.urls")),
    path("admin/", admin.site.urls),
    # The product images the sitemap lists (seed_demo draws them), served
    # whatever DEBUG says so that no image URL of the demo answers 404. A
    # real site serves MEDIA_ROOT from its web server or a storage's CDN.
    re_path(r"^media/(?P<path>.+)$", serve, {"document_root": settings.MEDIA_ROOT}),
]
