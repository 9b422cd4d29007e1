from __future__ import annotations

from django.apps import AppConfig

from django_sitemaps_plus.conf import conf


class SimpleSitemapsPlusConfig(AppConfig):
    """The app without autodiscovery: register sections yourself."""

    name = "django_sitemaps_plus"
    verbose_name = "Sitemaps"

    def ready(self) -> None:
        from django_sitemaps_plus import (
            checks,  # noqa: F401  (registers the checks)
            receivers,
        )

        # Cache invalidation and IndexNow queueing on model changes.
        receivers.connect()


class SitemapsPlusConfig(SimpleSitemapsPlusConfig):
    """The default config: imports every installed app's ``sitemaps`` module."""

    default = True

    def ready(self) -> None:
        super().ready()
        from django_sitemaps_plus.registry import autodiscover

        if conf.AUTODISCOVER:
            autodiscover()
