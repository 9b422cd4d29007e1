"""Settings of the benchmark project (``bench.bench_core`` sets them up).

The database comes from ``DATABASE_URL`` (django-environ); the default is a
SQLite file under ``bench/results/`` (gitignored). ``BENCH_LIMIT`` is the URLs
per sitemap file of both our sections and contrib's sitemaps (50,000).
"""

from __future__ import annotations

import os
from pathlib import Path

import environ

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
RESULTS_DIR.mkdir(exist_ok=True)

env = environ.Env()

SECRET_KEY = "bench-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{RESULTS_DIR / 'bench.sqlite3'}")
}

INSTALLED_APPS = [
    "django.contrib.sitemaps",
    "django_sitemaps_plus",
    "bench.benchapp",
]
ROOT_URLCONF = "bench.urls"
MIDDLEWARE: list[str] = []
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {},
    }
]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

#: URLs per file of every benchmarked sitemap (ours and contrib's).
BENCH_LIMIT = int(os.environ.get("BENCH_LIMIT", "50000"))

# No Sites framework: contrib builds URLs on the request's scheme and host
# (http://testserver under the test client); ours on the same, set here.
# The core engine is measured rendering every request: no cached serving
# (docs/benchmarks-serving.md measures that).
SITEMAPS_PLUS = {"BASE_URL": "http://testserver", "CACHE": False}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django_sitemaps_plus": {"handlers": ["console"], "level": "WARNING"}},
}
