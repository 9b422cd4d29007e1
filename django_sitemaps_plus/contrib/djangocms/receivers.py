"""Cache invalidation on django CMS's and djangocms-versioning's signals.

Saves and deletes of pages, contents, URLs, permissions, placeholders,
plugins and versions already invalidate through the core's model signal
receivers (``PageSection.invalidated_by``). The operation signals are
connected too, because some operations change what a sitemap lists through
``QuerySet.update()`` (a move rewrites descendants' URL paths, a publish
unpublishes the previous version in bulk, plugins are moved and pasted in
bulk), which sends no model signal.
"""

from __future__ import annotations

from typing import Any

from cms.models import Page

from django_sitemaps_plus.contrib.djangocms.sections import PageSection
from django_sitemaps_plus.contrib.pages import invalidate_pages


def on_operation(sender: Any, **kwargs: Any) -> None:
    failed = "django-sitemaps-plus: django CMS operation %r not handled"
    invalidate_pages(PageSection, Page, failed, kwargs.get("operation"))


def connect() -> None:
    """Connect to the operation signals (called from ``AppConfig.ready()``)."""
    from cms.signals import post_obj_operation, post_placeholder_operation
    from djangocms_versioning.signals import post_version_operation

    signals = {
        "post_obj_operation": post_obj_operation,
        "post_placeholder_operation": post_placeholder_operation,
        "post_version_operation": post_version_operation,
    }
    for name, signal in signals.items():
        signal.connect(on_operation, dispatch_uid=f"sitemaps_plus_djangocms.{name}")
