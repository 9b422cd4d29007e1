"""Settings of the Wagtail demo (``./example_project/run wagtail``).

A Wagtail site in English and French on SQLite: the sitemap comes from
``django_sitemaps_plus.contrib.wagtail`` alone, with no section of its own.
"""

from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default="django-insecure-wagtail-demo-dev-only")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'wagtail.sqlite3'}"),
}
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_sitemaps_plus",
    # The integration: /sitemap.xml for the Wagtail Site of each request.
    "django_sitemaps_plus.contrib.wagtail",
    "wagtail_demo",
    "wagtail.contrib.forms",
    "wagtail.contrib.redirects",
    "wagtail.embeds",
    "wagtail.sites",
    "wagtail.users",
    "wagtail.snippets",
    "wagtail.documents",
    "wagtail.images",
    "wagtail.search",
    "wagtail.admin",
    "wagtail",
    "modelcluster",
    "taggit",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "wagtail.contrib.redirects.middleware.RedirectMiddleware",
]

ROOT_URLCONF = "wagtail_demo.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

USE_TZ = True
TIME_ZONE = "Europe/Berlin"
USE_I18N = True
LANGUAGE_CODE = "en"
LANGUAGES = WAGTAIL_CONTENT_LANGUAGES = [("en", "English"), ("fr", "Français")]
WAGTAIL_I18N_ENABLED = True
WAGTAIL_SITE_NAME = "django-sitemaps-plus Wagtail demo"
WAGTAILADMIN_BASE_URL = env.str("WAGTAILADMIN_BASE_URL", default="http://127.0.0.1:8000")

STATIC_URL = "static/"
MEDIA_URL = "media/"
MEDIA_ROOT = BASE_DIR / "media"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The base URL comes from the Wagtail Site (seed_wagtail_demo points it at the
# server the run script starts); x-default names the English versions.
SITEMAPS_PLUS: dict[str, object] = {}
