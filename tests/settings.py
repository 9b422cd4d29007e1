"""Settings for the test suite.

The database and cache come from the environment so the same tests run on
SQLite and local memory by default, and on PostgreSQL, MariaDB, Redis and
Memcached in CI:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sitemaps_plus pytest
    CACHE_URL=redis://127.0.0.1:6379/1 pytest
"""

from __future__ import annotations

import environ

env = environ.Env()

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
TIME_ZONE = "Europe/Berlin"
LANGUAGE_CODE = "en"

DATABASES = {"default": env.db("DATABASE_URL", default="sqlite://:memory:")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    DATABASES["default"].setdefault("OPTIONS", {})["charset"] = "utf8mb4"
    DATABASES["default"]["TEST"] = {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"}

CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    # The admin overview's tests (tests/admin/test_admin_overview.py) add the
    # middleware they need; here for their tables.
    "django.contrib.admin",
    "django.contrib.sessions",
    "django.contrib.messages",
    # The live server serves the admin's CSS through it (the browser tests'
    # screenshots in docs/ show the admin as it looks).
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.sitemaps",
    "django_sitemaps_plus",
    "tests.testapp",
    # Extension tests: hreflang with real django-parler and django-modeltranslation
    # models, images, news, video.
    "modeltranslation",
    "parler",
    "tests.i18napp",
]
# The languages of the extension tests (django-modeltranslation adds one column
# per language to its translated fields).
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]
SITE_ID = 1
ROOT_URLCONF = "tests.urls"
# The live server (browser tests) serves static files from the apps' folders.
STATIC_URL = "/static/"
# What the admin needs (the overview's tests), and nothing that queries on its own.
MIDDLEWARE: list[str] = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Caching off for the suite: tests write rows with bulk_create() and inside
# rolled-back transactions (no on_commit), which a cache could not see. The
# cache tests (tests/serving/test_cache*.py) turn it on with override_settings.
SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
