"""Cache invalidation on Wagtail's signals.

Saves and deletes of pages, view restrictions, sites and locales already
invalidate through the core's model signal receivers (``PageSection``
names those models in ``invalidated_by``). Wagtail's own signals are
connected too, because some of its operations change what a sitemap lists
without a save the core sees as one of its models' (a move rewrites
descendants' paths with ``QuerySet.update()``; an unpublish of a subtree
updates rows in bulk).
"""

from __future__ import annotations

from typing import Any

from django_sitemaps_plus.contrib.pages import invalidate_pages
from django_sitemaps_plus.contrib.wagtail.sections import PageSection
from django_sitemaps_plus.contrib.wagtail.sites import forget_hosts


def on_page_change(sender: Any, instance: Any = None, **kwargs: Any) -> None:
    model = type(instance) if instance is not None else sender
    failed = "django-sitemaps-plus: Wagtail change of %r not handled"
    invalidate_pages(PageSection, model, failed, instance)


def on_site_change(sender: Any, **kwargs: Any) -> None:
    forget_hosts()


def connect() -> None:
    """Connect to Wagtail's page signals (called from ``AppConfig.ready()``)."""
    from django.db.models.signals import post_delete, post_save
    from wagtail.models import Site
    from wagtail.signals import (
        page_published,
        page_slug_changed,
        page_unpublished,
        post_page_move,
    )

    signals = {
        "page_published": page_published,
        "page_unpublished": page_unpublished,
        "post_page_move": post_page_move,
        "page_slug_changed": page_slug_changed,
    }
    for name, signal in signals.items():
        signal.connect(on_page_change, dispatch_uid=f"sitemaps_plus_wagtail.{name}")
    # The remembered host -> Site answers (sites.find_site).
    post_save.connect(on_site_change, sender=Site, dispatch_uid="sitemaps_plus_wagtail.site_saved")
    post_delete.connect(
        on_site_change, sender=Site, dispatch_uid="sitemaps_plus_wagtail.site_deleted"
    )
