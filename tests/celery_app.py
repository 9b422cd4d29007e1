"""The Celery app of the real-worker test (tests/build/test_build_celery.py), made
as Celery's Django guide makes a site's ``proj/celery.py``: configured from
Django's settings (``CELERY_*``), tasks found in the installed apps
(``django_sitemaps_plus.tasks`` brings ``django_sitemaps_plus.build_file``).
``tests.worker_settings`` imports it, as a site's ``proj/__init__.py`` does.

``celery -A tests.celery_app worker`` runs it. With ``CELERY_JOURNAL`` set,
each task's outcome in a worker (the pool process, the job's record or its
error) is appended there as a JSON line: no result backend is needed.

Faults, in every pool process (``tests.utils.failing_page``): with
``CELERY_FAILING_PAGE`` set, rendering that page raises (a job that fails in
a real worker); with ``CELERY_HANGING_PAGE`` and ``CELERY_HANGING_MARK``, the
first render of that page writes its process id to the mark file and waits
there to be killed (a job whose worker dies), and later renders go on.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from celery import Celery
from celery.signals import task_failure, task_success, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.worker_settings")

app = Celery("sitemaps_plus_tests")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _journal(entry: dict[str, Any]) -> None:
    path = os.environ.get("CELERY_JOURNAL")
    if path:
        # One short write in append mode: lines of two processes never mix.
        with open(path, "a", encoding="utf-8") as journal:
            journal.write(json.dumps({"pid": os.getpid(), **entry}) + "\n")


@task_success.connect
def _succeeded(sender: Any = None, result: Any = None, **kwargs: Any) -> None:
    _journal({"task": sender.request.id, "record": result})


@task_failure.connect
def _failed(sender: Any = None, task_id: str = "", exception: Any = None, **kwargs: Any) -> None:
    _journal({"task": task_id, "error": repr(exception)})


class _Patch:
    """``monkeypatch.setattr`` for a pool process, which lives for one test."""

    def setattr(self, target: Any, name: str, value: Any) -> None:
        setattr(target, name, value)


def _hang_once() -> None:
    mark = os.environ["CELERY_HANGING_MARK"]
    try:
        descriptor = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # the job run again, after its first run was killed
    os.write(descriptor, str(os.getpid()).encode())
    os.close(descriptor)
    time.sleep(300)  # killed long before: the test waits at most 120 s


@worker_process_init.connect
def _faults(**kwargs: Any) -> None:
    from tests.utils import failing_page

    if os.environ.get("CELERY_FAILING_PAGE"):
        failing_page(_Patch(), int(os.environ["CELERY_FAILING_PAGE"]))
    if os.environ.get("CELERY_HANGING_PAGE"):
        failing_page(_Patch(), int(os.environ["CELERY_HANGING_PAGE"]), fault=_hang_once)
