"""System check of the django CMS integration: what it needs installed."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.checks import CheckMessage, Error

#: The apps the integration reads: published versions, sites, pages.
REQUIRED_APPS = {
    "djangocms_versioning": "djangocms-versioning (which version of a page is published)",
    "django.contrib.sites": "the Sites framework (which site's pages are listed)",
    "cms": "django CMS",
}


def check_required_apps(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    return [
        Error(
            f"django_sitemaps_plus.contrib.djangocms needs {what} in INSTALLED_APPS.",
            hint=f'Add "{app}" to INSTALLED_APPS (pip install "django-sitemaps-plus[djangocms]").',
            id="sitemaps_plus.E141",
        )
        for app, what in REQUIRED_APPS.items()
        if not apps.is_installed(app)
    ]
