"""URLconf of the Wagtail demo."""

from __future__ import annotations

from django.conf import settings
from django.conf.urls.i18n import i18n_patterns
from django.conf.urls.static import static
from django.urls import include, path
from wagtail import urls as wagtail_urls
from wagtail.admin import urls as wagtailadmin_urls

urlpatterns = [
    # Before Wagtail's catch-all: /sitemap.xml, its files, robots.txt.
    path("", include("django_sitemaps_plus.urls")),
    path("admin/", include(wagtailadmin_urls)),
    *static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT),
    # English at /, French at /fr/.
    *i18n_patterns(path("", include(wagtail_urls)), prefix_default_language=False),
]
