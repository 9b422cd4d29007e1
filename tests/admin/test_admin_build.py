"""The admin overview's "Static build" panel (issue 24): the last build
(from its manifest, and what it did, kept in the sitemap cache) and a
running one (its plan and its jobs' records in the build storage); nothing
when no build storage is configured."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from django_sitemaps_plus.build.plan import (
    PLAN_DIR,
    PLAN_FILE,
    jobs_counter_key,
    load_plan,
    make_plan,
)
from django_sitemaps_plus.conf import get_cache
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.storage import get_build_storage
from django_sitemaps_plus.sites import site_context
from tests.admin import test_admin_overview
from tests.admin.test_admin_overview import OVERVIEW, _staff
from tests.build.test_build_tasks import needs_tasks, use_backend

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_site")]

#: Articles in three files, the admin's URLs.
admin_site = test_admin_overview.admin_site

MOMENT = dt.datetime(2024, 1, 5, 8, tzinfo=dt.timezone.utc)
#: ``MOMENT`` as the overview shows it (TIME_ZONE is Europe/Berlin).
SHOWN = (
    '<time datetime="2024-01-05T08:00:00+00:00" title="2024-01-05T08:00:00+00:00">'
    "Jan. 5, 2024, 9 a.m. CET</time>"
)


@pytest.fixture
def out(settings: Any, tmp_path: Path) -> Path:
    """The build storage: a folder."""
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "BUILD_DIR": str(tmp_path)}
    return tmp_path


def overview() -> str:
    """The overview as staff with the permission (the user made once)."""
    client = Client()
    user = User.objects.filter(username="owner").first() or _staff(permitted=True)
    client.force_login(user)
    response = client.get(OVERVIEW)
    assert response.status_code == 200
    return str(response.content.decode())


def dated(path: Path) -> None:
    os.utime(path, (MOMENT.timestamp(), MOMENT.timestamp()))


def running_panel(out: Path, generation: str, done: int, how: str) -> str:
    """The overview with a plan of 3 jobs, ``done`` of them done, written at
    ``MOMENT``; checks its running build's paragraph."""
    dated(out / PLAN_DIR / PLAN_FILE)
    html = overview()
    assert f"Running: plan <code>{generation}</code>," in html
    assert f'<progress max="3" value="{done}"></progress>' in html
    assert f"<strong>{done}</strong> of <strong>3</strong> file jobs done,\n" in html
    assert f"{how},\n        since {SHOWN}.</p>" in html
    return html


def test_nothing_without_a_build_storage() -> None:
    html = overview()
    assert "Static build" not in html and 'id="build"' not in html


def test_before_any_build(out: Path) -> None:
    html = overview()
    assert "<h2>Static build</h2>" in html
    assert '<p id="build">Last build:\n      none yet.</p>' in html
    assert '<p id="running-build">No build is running.</p>' in html


def test_the_last_build_and_what_it_did(out: Path) -> None:
    call_command("build_sitemaps", "--quiet")
    dated(out / "sitemaps-manifest.json")
    html = overview()
    # The manifest: 3 files and the index; 7 URLs. What it did: all written.
    assert f'<p id="build">Last build:\n      {SHOWN}, 4 files, 7 URLs:' in html
    assert '<span id="build-result">4 written, 0 unchanged, 0 removed in ' in html
    assert '<p id="running-build">No build is running.</p>' in html
    call_command("build_sitemaps", "--quiet")  # nothing changed
    assert '<span id="build-result">0 written, 4 unchanged, 0 removed in ' in overview()


def test_an_unfinished_build_of_build_sitemaps(out: Path) -> None:
    """A plan in the storage without its index (a build running, or one
    killed: the next resumes it)."""
    storage = get_build_storage()
    plan = make_plan(
        storage, site=site_context(None), gzip=False, text=False, prefix="", force=False
    )
    html = running_panel(out, plan.generation, done=0, how="in build_sitemaps")
    assert "enqueued" not in html


@needs_tasks
def test_an_enqueued_build_while_task_workers_run_it(out: Path, settings: Any) -> None:
    backend = use_backend(settings, "dummy")
    call_command("build_sitemaps", "--enqueue", "--quiet")
    first, second, last = backend.results
    for result in (first, second):
        result.task.call(*result.args, **result.kwargs)
    plan = load_plan(get_build_storage())
    assert plan is not None
    html = running_panel(out, plan.generation, done=2, how="enqueued on task workers")
    assert '<p id="build">Last build:\n      none yet.</p>' in html

    # Its count expired: no worker finished a job for 10 minutes.
    get_cache().delete(jobs_counter_key(plan))
    assert "enqueued on task workers (stalled: none has finished a job for over 10 minutes" in (
        overview()
    )
    # The cache does not answer: the page cannot tell, and does not call it stalled.
    quiet.failed(RuntimeError("the sitemap cache does not answer"))
    try:
        html = overview()
    finally:
        quiet.reset()
    assert "stalled" not in html
    assert "(whether its workers still run is unknown: the sitemap cache does not answer)" in html

    last.task.call(*last.args, **last.kwargs)  # the last job writes the index
    html = overview()
    assert '<p id="running-build">No build is running.</p>' in html
    assert ", 4 files, 7 URLs:" in html
    assert '<span id="build-result">4 written, 0 unchanged, 0 removed, by task workers</span>' in (
        html
    )
