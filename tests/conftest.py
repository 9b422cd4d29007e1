from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import TestCase, TransactionTestCase

from django_sitemaps_plus.registry import SitemapRegistry, site
from django_sitemaps_plus.serving import locks, responses
from tests.utils import unavailable


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    """Each test starts with an empty default cache: the layouts and measured
    blocks a test leaves (kept whatever ``CACHE`` says) are not another's."""
    from django.core.cache import cache

    cache.clear()
    yield


# Streamed bodies a test never read ----------------------------------------
#
# A server always closes a response (PEP 3333; Django's ASGI handler), which
# closes its body's generator: the file's server-side cursor, its render lock.
# Django's test client closes a streamed response only when its body is read
# to the end. A body a test never reads (headers, status only) would keep its
# generator, started by the view, until the garbage collector finalised it,
# perhaps during a later test: on PostgreSQL the cursor's CLOSE then ran in
# that test's transaction, after the savepoint the cursor lived in was rolled
# back, and PostgreSQL aborted the later test's transaction (a 503 from
# InFailedSqlTransaction at its next query, depending on when the collector
# ran). Each body is closed, as a server would, before the test's database
# is rolled back or flushed.

_unread_bodies: list[Iterator[bytes]] = []


def _recording_bodies(make: Callable[..., Any]) -> Callable[..., Any]:
    def streaming_response(request: Any, chunks: Iterator[bytes], content_type: str) -> Any:
        chunks = iter(chunks)
        _unread_bodies.append(chunks)
        return make(request, chunks, content_type)

    return streaming_response


def close_unread_bodies() -> None:
    """Close every body served since the last call, as a server would; a
    body whose cleanup fails does not keep the others open (the first
    failure is raised once all are closed)."""
    failures: list[BaseException] = []
    while _unread_bodies:
        close = getattr(_unread_bodies.pop(), "close", None)
        if close is not None:
            try:
                close()
            except Exception as failure:
                failures.append(failure)
    if failures:
        raise failures[0]


def _closing_bodies_first(teardown: Callable[[Any], None]) -> Callable[[Any], None]:
    def _fixture_teardown(self: Any) -> None:
        try:
            close_unread_bodies()
        finally:
            # The rollback (or flush) happens whatever a body's cleanup did.
            teardown(self)

    return _fixture_teardown


# Once for the session, at import: the unittest-style test cases and
# pytest-django's database fixture both end through these.
responses.streaming_response = _recording_bodies(responses.streaming_response)
for _case in (TestCase, TransactionTestCase):
    _case._fixture_teardown = _closing_bodies_first(_case._fixture_teardown)


@pytest.fixture(autouse=True)
def _no_unread_bodies() -> Iterator[None]:
    """Tests without a database close theirs too (a stored file's handle)."""
    yield
    close_unread_bodies()


@pytest.fixture
def polls(monkeypatch) -> list[float]:
    """The pauses of every request that waits for a lock's holder (none: no
    request waited)."""
    seen: list[float] = []
    real = locks.poll_delays

    def delays() -> Iterator[float]:
        for delay in real():
            seen.append(delay)
            yield delay

    monkeypatch.setattr(locks, "poll_delays", delays)
    return seen


@pytest.fixture
def registry() -> Iterator[SitemapRegistry]:
    """The default registry, emptied for one test and restored after it."""
    saved = dict(site._registry)
    site._registry.clear()
    try:
        yield site
    finally:
        site._registry.clear()
        site._registry.update(saved)


def _ignored_suites() -> list[str]:
    """The integration suites not selected by DJANGO_SETTINGS_MODULE.

    Each needs its CMS and its own settings, so it runs in its own
    environment (tox.ini, .ci/run), never beside the core suite.
    """

    selected = os.environ.get("DJANGO_SETTINGS_MODULE", "")
    suites = {
        "cms_wagtail": "tests.wagtail_settings",
        "cms_wagtail_swapped": "tests.wagtail_swapped_settings",
        "cms_djangocms": "tests.djangocms_settings",
    }
    return [folder for folder, settings in suites.items() if settings != selected]


collect_ignore = _ignored_suites()


# A real headless Chromium (browser tests) -----------------------------------


def _chromium() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        unavailable("Chromium and ChromeDriver are not installed (.ci/run installs them)")
    return browser, driver


@pytest.fixture
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("selenium is not installed (the test extra installs it)")

    binary, driver = _chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        # This machine's network is closed: no background connections.
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
    ):
        options.add_argument(argument)
    options.add_argument("--window-size=1200,900")
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield chrome
    finally:
        chrome.quit()


@pytest.fixture(autouse=True)
def _breaker_closed() -> Iterator[None]:
    """Each test starts with the cache's breaker closed: a test that made the
    cache fail does not keep the next one from it."""
    from django_sitemaps_plus.serving import quiet

    quiet.reset()
    yield
