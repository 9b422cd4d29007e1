"""``PageSitemapSettings``: lets editors take a page out of the sitemap.

A django CMS page extension (one row per page, edited from the page's menu
in the toolbar: "Sitemap settings"); a page without a row is listed.
"""

from __future__ import annotations

from cms.extensions import PageExtension
from cms.extensions.extension_pool import extension_pool
from django.utils.translation import gettext_lazy as _

from django_sitemaps_plus.contrib.pages import show_in_sitemap_field


class PageSitemapSettings(PageExtension):  # type: ignore[misc]
    """Per-page sitemap settings; a page with ``show_in_sitemap`` off is not
    listed (in any language). Its children still are."""

    show_in_sitemap = show_in_sitemap_field()

    class Meta:
        verbose_name = _("sitemap settings")
        verbose_name_plural = _("sitemap settings")

    def __str__(self) -> str:
        return f"sitemap settings of page {self.extended_object_id}"


extension_pool.register(PageSitemapSettings)
