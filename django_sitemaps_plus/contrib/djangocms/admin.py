from __future__ import annotations

from cms.extensions import PageExtensionAdmin
from django.contrib import admin

from django_sitemaps_plus.contrib.djangocms.models import PageSitemapSettings


@admin.register(PageSitemapSettings)
class PageSitemapSettingsAdmin(PageExtensionAdmin):  # type: ignore[misc]
    """The extension's form, opened from the toolbar's page menu."""
