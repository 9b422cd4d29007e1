from __future__ import annotations

from django.apps import AppConfig
from django.core import checks

from django_sitemaps_plus.contrib.djangocms.checks import check_required_apps


class DjangoCMSSitemapsConfig(AppConfig):
    """Sitemaps for django CMS pages (docs/djangocms.md)."""

    name = "django_sitemaps_plus.contrib.djangocms"
    label = "sitemaps_plus_djangocms"
    verbose_name = "Sitemaps for django CMS"
    default_auto_field = "django.db.models.BigAutoField"
    #: The core's site resolver hook (sites.site_context): the site django
    #: CMS resolved for the request (``request.site``), else the Sites framework's.
    sitemaps_plus_site_resolver = "django_sitemaps_plus.contrib.djangocms.sites.cms_site_context"

    def ready(self) -> None:
        from django_sitemaps_plus.contrib.djangocms import receivers

        checks.register(check_required_apps)

        # Cache invalidation on django CMS's and djangocms-versioning's signals.
        receivers.connect()
