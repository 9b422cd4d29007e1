"""Settings for the example site.

Everything that differs between a laptop and a server comes from the
environment through django-environ, with defaults that give a working demo on
SQLite and local memory:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sitemaps_plus_example
    CACHE_URL=redis://127.0.0.1:6379/1
    SITEMAPS_BASE_URL=https://www.example.com
    DEBUG=false SECRET_KEY=... ALLOWED_HOSTS=www.example.com
"""

from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=True)
# The default is only good for a local demo; any real deployment sets its own.
SECRET_KEY = env.str("SECRET_KEY", default="django-insecure-example-project-dev-only")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    # utf8mb4 so that non-ASCII slugs such as "café-crème" round-trip.
    DATABASES["default"].setdefault("OPTIONS", {})["charset"] = "utf8mb4"

CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
# A cache server that stops answering must not hang requests: bound every wait
# (check sitemaps_plus.W005; a timeout serves the sitemap rendered without it).
_CACHE_TIMEOUTS = {
    "django.core.cache.backends.redis.RedisCache": {
        "socket_timeout": 1,
        "socket_connect_timeout": 1,
    },
    "django.core.cache.backends.memcached.PyMemcacheCache": {"timeout": 1, "connect_timeout": 1},
}
for _key, _value in _CACHE_TIMEOUTS.get(CACHES["default"]["BACKEND"], {}).items():
    CACHES["default"].setdefault("OPTIONS", {}).setdefault(_key, _value)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django_sitemaps_plus",
    "blog",
    "shop",
    "pages",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Activates the language of /de/... and /fr/... (i18n_patterns in urls.py).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example_project.urls"
WSGI_APPLICATION = "example_project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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

SITE_ID = 1

USE_TZ = True
TIME_ZONE = "Europe/Berlin"
LANGUAGE_CODE = "en"
# Three languages so hreflang alternates have something to show.
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]
USE_I18N = True

STATIC_URL = "static/"
MEDIA_URL = "media/"
# The product images seed_demo draws (served by the example's URLconf).
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(BASE_DIR / "media")))

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

SITEMAPS_PLUS = {
    "BASE_URL": env.str("SITEMAPS_BASE_URL", default="http://127.0.0.1:8000"),
    # /robots.txt with the Sitemap: line (the demo has no robots.txt of its own).
    "ROBOTS_TXT": True,
    # IndexNow on, so the admin overview shows its queue: saving an article in
    # the admin queues its URL; nothing is sent until `manage.py
    # indexnow_submit` runs (the demo never runs it). A demo key, not a secret.
    "INDEXNOW_KEY": env.str("SITEMAPS_INDEXNOW_KEY", default="demo-indexnow-key-0001"),
}
