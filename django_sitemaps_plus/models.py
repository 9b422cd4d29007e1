"""No tables: one unmanaged model gives the admin overview its place in the
admin index and its permission."""

from __future__ import annotations

from django.db import models


class SitemapOverview(models.Model):
    """The sitemap overview in the Django admin (``admin.py``); nothing is stored."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("view_sitemap_overview", "Can view the sitemap overview")]
        verbose_name = "sitemap overview"
        verbose_name_plural = "sitemap overview"

    def __str__(self) -> str:
        return "Sitemap overview"
