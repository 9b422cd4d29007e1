"""The serving benchmark's settings plus the Tasks framework's immediate backend.

``bench.bench_build`` runs ``build_sitemaps`` with them in a fresh process:
the sitemap cache from ``BENCH_CACHE_URL`` (shared by every process of a run,
so a build after one change renders one file), ``CACHE`` on, and ``--enqueue``
running each file job as it is enqueued, in the enqueuing process.
"""

from __future__ import annotations

from bench.serving.settings import *  # noqa: F403

try:  # Django 6.0+
    import django.tasks  # noqa: F401

    _TASKS = "django.tasks"
except ImportError:  # the django-tasks package on 4.2-5.2
    _TASKS = "django_tasks"

TASKS = {"default": {"BACKEND": f"{_TASKS}.backends.immediate.ImmediateBackend"}}
