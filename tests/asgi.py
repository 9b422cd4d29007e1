"""ASGI application of the test project (and ``wsgi``, its WSGI one, for
gunicorn), for the real-server tests (test_asgi.py).

``SITEMAPS_TEST_REGISTER=articles`` registers the articles section;
``=cached`` the same with the cache on (local memory: one server process), a
wait for another request's render lock longer than any test waits, and
``/invalidate/``, which makes the section's cached files stale;
``=counted`` a section that counts its renders and the waits for another
request's render, read at ``/renders/``, with the cache on (local memory: one
server process) and the same long wait for a render lock.

``SITEMAPS_TEST_HOLD=DIRECTORY`` (any of them): a render that starts while
``DIRECTORY/armed`` exists removes it, and once it has rendered ``HOLD_AT``
URLs creates ``DIRECTORY/reached`` and waits until ``DIRECTORY/go`` exists
(for longer than a test's client waits for an answer: a client left waiting
fails before the server gives up). A test then knows what its client received
while the render was midway, without timing anything.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

from django_sitemaps_plus.serving import versions

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
application = get_asgi_application()
wsgi = get_wsgi_application()

HOLD_AT = 8000


def _held(entries: Iterator[str], hold: Path) -> Iterator[str]:
    armed = hold / "armed"
    if not armed.exists():
        yield from entries
        return
    armed.unlink()
    (hold / "go").unlink(missing_ok=True)
    urls = 0
    for entry in entries:
        before, urls = urls, urls + entry.count("<url>")
        if before < HOLD_AT <= urls:
            (hold / "reached").touch()
            deadline = time.monotonic() + 180
            while not (hold / "go").exists():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{hold / 'go'} never appeared")
                time.sleep(0.01)
            (hold / "go").unlink()
        yield entry


def _entries(entries: Iterator[str]) -> Iterator[str]:
    """A render's entries, held as ``SITEMAPS_TEST_HOLD`` asks (if it is set)."""
    hold = os.environ.get("SITEMAPS_TEST_HOLD")
    return _held(entries, Path(hold)) if hold else entries


# A request that found the lock of a holder that never frees it would wait past
# the test client's timeout: the test fails.
LONG_LOCK = {"CACHE_LOCK_WAIT": 600.0, "CACHE_LOCK_TIMEOUT": 600}

mode = os.environ.get("SITEMAPS_TEST_REGISTER")
if mode in ("articles", "cached"):
    from django.conf import settings

    from django_sitemaps_plus import ModelSection, register
    from tests.testapp.models import Article

    if mode == "cached":
        from django.http import HttpRequest, HttpResponse
        from django.urls import clear_url_caches, include, path

        from django_sitemaps_plus.serving import cache as sitemap_cache

        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True, **LONG_LOCK}

        def invalidate(request: HttpRequest) -> HttpResponse:
            versions.invalidate("articles")
            return HttpResponse("invalidated")

        settings.ROOT_URLCONF = __name__
        urlpatterns = [path("invalidate/", invalidate), path("", include("tests.urls"))]
        clear_url_caches()

    class Held(ModelSection):
        writes_own_entries = True
        name = "articles"
        # Sized by a bound from SQL (no render to lay it out): one file.
        url_name = "article"
        url_kwargs = {"slug": "slug"}

        def page_entries(self, number, site, info=None):  # type: ignore[no-untyped-def]
            return _entries(iter(super().page_entries(number, site, info)))

    register(Article)(Held)
elif mode == "counted":
    from django.conf import settings
    from django.http import HttpRequest, HttpResponse
    from django.urls import clear_url_caches, include, path

    from django_sitemaps_plus import ModelSection, register
    from django_sitemaps_plus.serving import cache as sitemap_cache
    from tests.testapp.models import Article

    renders = [0]
    waits = [0]
    wait_for_entry = sitemap_cache._wait_for_entry

    # A request that found the render lock held waits for the holder's file.
    def counting_wait(*args):  # type: ignore[no-untyped-def]
        waits[0] += 1
        return wait_for_entry(*args)

    sitemap_cache._wait_for_entry = counting_wait  # type: ignore[assignment]

    class Counted(ModelSection):
        writes_own_entries = True
        name = "counted"
        url_name = "article"
        url_kwargs = {"slug": "slug"}

        def page_entries(self, number, site, info=None):  # type: ignore[no-untyped-def]
            renders[0] += 1
            yield from _entries(iter(super().page_entries(number, site, info)))

    register(Article)(Counted)

    def count(request: HttpRequest) -> HttpResponse:
        return HttpResponse(f"{renders[0]} {waits[0]}")

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True, **LONG_LOCK}
    settings.ROOT_URLCONF = __name__
    urlpatterns = [path("renders/", count), path("", include("tests.urls"))]
    clear_url_caches()
