"""Settings of the django CMS demo (``./example_project/run djangocms``).

A django CMS 5.1 site with djangocms-versioning in English and French on
SQLite: the sitemap comes from ``django_sitemaps_plus.contrib.djangocms``
alone, with no section of its own.
"""

from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default="django-insecure-djangocms-demo-dev-only")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'djangocms.sqlite3'}"),
}
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django_sitemaps_plus",
    # The integration: /sitemap.xml for the current site's pages.
    "django_sitemaps_plus.contrib.djangocms",
    "djangocms_demo",
    "cms",
    "menus",
    "treebeard",
    "sekizai",
    "djangocms_versioning",
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
    "cms.middleware.user.CurrentUserMiddleware",
    "cms.middleware.page.CurrentPageMiddleware",
    "cms.middleware.toolbar.ToolbarMiddleware",
    "cms.middleware.language.LanguageCookieMiddleware",
]

ROOT_URLCONF = "djangocms_demo.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "sekizai.context_processors.sekizai",
                "cms.context_processors.cms_settings",
            ],
        },
    },
]

USE_TZ = True
TIME_ZONE = "Europe/Berlin"
USE_I18N = True
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("fr", "Français")]
SITE_ID = 1
CMS_LANGUAGES = {
    1: [{"code": "en", "name": "English"}, {"code": "fr", "name": "Français"}],
    "default": {"fallbacks": ["en"], "redirect_on_fallback": False, "hide_untranslated": False},
}
CMS_TEMPLATES = [("djangocms_demo/page.html", "Page")]
CMS_PERMISSION = True
CMS_CONFIRM_VERSION4 = True
SILENCED_SYSTEM_CHECKS = ["treebeard.E001"]

STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The base URL is the Site's domain (seed_djangocms_demo points it at the server
# the run script starts), with http.
SITEMAPS_PLUS: dict[str, object] = {"PROTOCOL": "http"}
