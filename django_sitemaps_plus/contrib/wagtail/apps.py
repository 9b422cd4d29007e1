from __future__ import annotations

from django.apps import AppConfig


class WagtailSitemapsConfig(AppConfig):
    """Sitemaps for the Wagtail ``Site`` of each request (docs/wagtail.md)."""

    name = "django_sitemaps_plus.contrib.wagtail"
    label = "sitemaps_plus_wagtail"
    verbose_name = "Sitemaps for Wagtail"
    #: The core's site resolver hook (sites.site_context): the request's
    #: Wagtail Site gives the base URL and is handed to sections.
    sitemaps_plus_site_resolver = "django_sitemaps_plus.contrib.wagtail.sites.wagtail_site_context"

    def ready(self) -> None:
        from django_sitemaps_plus.contrib.wagtail import receivers

        # Cache invalidation on Wagtail's own signals (publish, move, ...).
        receivers.connect()
