"""The "Sitemap settings" entry in django CMS's page menu."""

from __future__ import annotations

from typing import Any

from cms.extensions.toolbar import ExtensionToolbar
from cms.toolbar_pool import toolbar_pool
from django.utils.translation import gettext_lazy as _

from django_sitemaps_plus.contrib.djangocms.models import PageSitemapSettings


@toolbar_pool.register
class SitemapSettingsToolbar(ExtensionToolbar):  # type: ignore[misc]
    model = PageSitemapSettings

    def populate(self) -> Any:
        current_page_menu = self._setup_extension_toolbar()
        if current_page_menu:
            _extension, url = self.get_page_extension_admin()
            if url:
                current_page_menu.add_modal_item(
                    _("Sitemap settings"), url=url, disabled=not self.toolbar.edit_mode_active
                )
