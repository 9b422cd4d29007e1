"""Settings for the Wagtail integration's tests (``pytest tests/wagtail``).

Wagtail is not in the default test environment: these tests run in their own
(``tox -e wagtail7``/``wagtail8``, ``.ci/run``), where a missing Wagtail is an
import error, never a skip.
"""

from __future__ import annotations

from tests.settings import *  # noqa: F403
from tests.settings import DATABASES, INSTALLED_APPS, MIDDLEWARE

if DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    # The charset's default collation, as the connection's: a Wagtail migration
    # compares a column with a CAST(... AS char), which takes the connection's.
    DATABASES["default"]["TEST"] = {"CHARSET": "utf8mb4"}

INSTALLED_APPS = [
    *(app for app in INSTALLED_APPS if app not in ("tests.i18napp", "modeltranslation", "parler")),
    "django_sitemaps_plus.contrib.wagtail",
    "wagtail.contrib.sitemaps",
    "wagtail.contrib.routable_page",
    "wagtail.images",
    "wagtail.documents",
    "wagtail.users",
    "wagtail.admin",
    "wagtail",
    "modelcluster",
    "taggit",
    # django.contrib.admin, sessions and messages, with their middleware and
    # context processors, come from tests.settings (the admin overview's tests).
    "tests.wagtailapp",
]
MIDDLEWARE = list(MIDDLEWARE)
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
ROOT_URLCONF = "tests.wagtail_urls"
WAGTAIL_SITE_NAME = "Tests"
WAGTAILADMIN_BASE_URL = "http://localhost"
WAGTAIL_I18N_ENABLED = True
LANGUAGES = WAGTAIL_CONTENT_LANGUAGES = [("en", "English"), ("fr", "Français")]
LANGUAGE_CODE = "en"
USE_I18N = True
# The sites are Wagtail's: the Wagtail resolver gives the base URL.
SITEMAPS_PLUS = {"CACHE": False}
STATIC_URL = "/static/"
MEDIA_URL = "/media/"
