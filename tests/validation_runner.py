"""A ``VALIDATION_RUNNER`` for the tests: records the run it is handed and
runs it at once, in the caller's thread (a Celery task's ``delay`` in a
project)."""

from __future__ import annotations

from django_sitemaps_plus import site_validation

handed: list[str] = []


def run_now(run_id: str) -> None:
    handed.append(run_id)
    site_validation.run(run_id)
