"""The core benchmark's settings plus a Redis cache and the serving options.

Environment: ``DATABASE_URL`` (set by the harness: a copy of the seeded
SQLite file), ``BENCH_CACHE_URL`` (default ``redis://127.0.0.1:6379/3``),
``SERVING_CACHE`` ("1" cached, "0" rendered on every request),
``SERVING_DB_POOL`` ("1": PostgreSQL through psycopg's connection pool, Django
5.1+'s ``OPTIONS["pool"]``, instead of a connection opened per request).
"""

from __future__ import annotations

import os

from bench.settings import *  # noqa: F403
from bench.settings import DATABASES, RESULTS_DIR, env

CACHES = {"default": env.cache("BENCH_CACHE_URL", default="redis://127.0.0.1:6379/3")}
SITEMAPS_PLUS = {
    "BASE_URL": "http://testserver",
    "CACHE": os.environ.get("SERVING_CACHE", "1") == "1",
    "BUILD_DIR": str(RESULTS_DIR / "serving-build"),
}

if os.environ.get("SERVING_DB_POOL") == "1":
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = True
