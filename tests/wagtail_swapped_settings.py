"""Wagtail 8's swappable page model: ``WAGTAIL_PAGE_MODEL`` names another base.

The base page model is the one Wagtail ships for testing this setting
(``wagtail.test.basepage``: ``BasePage(AbstractPage)`` with its bootstrap
migrations). ``tests/cms_wagtail_swapped`` runs with these settings, on
Wagtail 8 only (7.0 has no swappable page model).
"""

from __future__ import annotations

from tests.wagtail_settings import *  # noqa: F403
from tests.wagtail_settings import INSTALLED_APPS

INSTALLED_APPS = [
    "wagtail.test.basepage",
    # The test app's pages subclass wagtail.models.Page, which is swapped out.
    *(app for app in INSTALLED_APPS if app != "tests.wagtailapp"),
]
WAGTAIL_PAGE_MODEL = "basepage.BasePage"
WAGTAIL_I18N_ENABLED = False
