"""``SitemapPageMixin``: lets editors take a page out of the sitemap.

The integration has no tables of its own; the mixin adds one field to the
page types that use it (their migrations carry it).
"""

from __future__ import annotations

from typing import Any

from django.db import models
from wagtail.models.panels import PanelPlaceholder

from django_sitemaps_plus.contrib.pages import show_in_sitemap_field


class _PromotePanels:
    """``promote_panels``: the next class's panels plus ``show_in_sitemap``.

    A page type that sets its own ``promote_panels`` adds
    ``FieldPanel("show_in_sitemap")`` itself.
    """

    def __get__(self, instance: Any, owner: type[Any]) -> list[Any]:
        mro = owner.__mro__
        for base in mro[mro.index(SitemapPageMixin) + 1 :]:
            if "promote_panels" in vars(base):
                inherited = list(vars(base)["promote_panels"])
                break
        else:
            inherited = []
        return [
            *inherited,
            PanelPlaceholder("wagtail.admin.panels.FieldPanel", ["show_in_sitemap"], {}),
        ]


class SitemapPageMixin(models.Model):
    """Mix into a page type (``class BlogPage(SitemapPageMixin, Page)``) for
    a "Show in sitemap" checkbox in the promote tab.

    A page with it unchecked is not listed; its children still are (uncheck
    theirs too, or restrict the section with a view restriction).
    """

    show_in_sitemap = show_in_sitemap_field()

    promote_panels: Any = _PromotePanels()

    class Meta:
        abstract = True
