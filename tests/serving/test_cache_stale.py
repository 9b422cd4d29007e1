"""Stale while refresh: while another process renders a file's new version,
a request is answered at once with the version the cache holds (its own
body, ETag and Last-Modified), for at most ``CACHE_STALE_SECONDS`` after
the change; a 304 confirms only the version sent (docs/caching.md).

"Another process holds the render lock" is the test taking the file's lock
(``locks.Lock`` on its lock key), or a thread of the test rendering. Run on
local memory by default and, with ``CACHE_URL``, on Redis and Memcached.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils.http import http_date

from django_sitemaps_plus import Section, register
from django_sitemaps_plus import conf as sitemaps_conf
from django_sitemaps_plus.serving import cache as sitemap_cache
from django_sitemaps_plus.serving import entries, locks, versions
from tests.testapp.models import Article
from tests.utils import articles, at, cache_lookup, fetch, locs

pytestmark = [pytest.mark.cache, pytest.mark.django_db]

CACHED = {"BASE_URL": "https://example.com", "CACHE": True}
FILE = "/sitemap-articles-1.xml"
INDEX = "/sitemap.xml"
#: The article the save renames (the old file lists article-1, the new one renamed).
OLD_LOC = "https://example.com/articles/article-1/"
NEW_LOC = "https://example.com/articles/renamed/"


@pytest.fixture
def saved(settings, registry, django_capture_on_commit_callbacks) -> dict[str, Any]:
    """Caching on, the index and the articles' file warm, then a save that
    changes both (a slug, a later lastmod): the responses before it, by path."""
    settings.SITEMAPS_PLUS = dict(CACHED)
    register(Article, lastmod_fields=["updated_at"])
    articles(3, updated_at=at(1))
    before = {path: fetch(path)[0] for path in (INDEX, FILE)}
    with django_capture_on_commit_callbacks(execute=True):
        article = Article.objects.get(pk=2)
        article.slug = "renamed"
        article.updated_at = at(5)
        article.save()
    return before


@contextmanager
def rendering_elsewhere(path: str) -> Iterator[None]:
    """Another process holds the render lock of the file at ``path``."""
    lock = locks.Lock(sitemaps_conf.get_cache(), cache_lookup(path).lock_key, 60)
    assert lock.take()
    try:
        yield
    finally:
        lock.release()


def body_of(response: Any) -> bytes:
    body = b"".join(response.streaming_content) if response.streaming else response.content
    if response.get("Content-Encoding") == "gzip":
        return gzip.decompress(body)
    return body


def etag_of(body: bytes, gzipped: bool = False) -> str:
    """The strong ETag the cache gives ``body`` (docs/caching.md, HTTP)."""
    digest = hashlib.sha256(body).hexdigest()[:32]
    return f'"{digest}-gz"' if gzipped else f'"{digest}"'


@pytest.mark.parametrize("path", [FILE, INDEX])
def test_the_previous_version_is_served_at_once_without_a_query(saved, polls, path):
    before = saved[path]
    with rendering_elsewhere(path), CaptureQueriesContext(connection) as queries:
        stale = Client().get(path)
    assert stale.status_code == 200
    assert body_of(stale) == body_of(before)
    for header in ("ETag", "Last-Modified", "Content-Length", "Vary"):
        assert stale[header] == before[header], header
    assert stale["Last-Modified"] == http_date(at(1).timestamp())
    assert queries.captured_queries == []
    assert polls == []  # no wait for the holder
    # The lock free, the new version: rendered by this request, its own ETag.
    fresh = Client().get(path)
    assert fresh["Last-Modified"] == http_date(at(5).timestamp())
    assert fresh["ETag"] != before["ETag"]
    assert fresh["ETag"] == etag_of(body_of(fresh))
    if path == FILE:
        assert NEW_LOC in locs(body_of(fresh)) and OLD_LOC in locs(body_of(stale))


@pytest.mark.parametrize("path", [FILE, INDEX])
def test_a_304_confirms_only_the_version_sent(saved, path):
    before = saved[path]
    old = {"HTTP_IF_NONE_MATCH": before["ETag"]}
    since = {"HTTP_IF_MODIFIED_SINCE": before["Last-Modified"]}
    with rendering_elsewhere(path):
        # The previous version is what would be sent: its validators match.
        for headers in (old, since):
            response = Client().get(path, **headers)
            assert response.status_code == 304, headers
            assert response["ETag"] == before["ETag"]
        zipped = Client().get(path, HTTP_ACCEPT_ENCODING="gzip")
        assert zipped["ETag"] == etag_of(body_of(before), gzipped=True)
        assert body_of(zipped) == body_of(before)
        head = Client().head(path)
        assert head["ETag"] == before["ETag"]
        assert head["Content-Length"] == before["Content-Length"]
        assert head.content == b""
    # The new version is what is sent: no 304 for the old validators, and
    # the new body with its own ETag.
    for headers in (old, since):
        response = Client().get(path, **headers)
        assert response.status_code == 200, headers
        assert response["ETag"] != before["ETag"]
        assert response["ETag"] == etag_of(body_of(response))
        assert response["Last-Modified"] == http_date(at(5).timestamp())


@pytest.mark.parametrize("path", [FILE, INDEX])
def test_with_no_stale_seconds_a_request_waits_and_renders_as_before(
    saved, settings, polls, caplog, path
):
    settings.SITEMAPS_PLUS = {**CACHED, "CACHE_STALE_SECONDS": 0, "CACHE_LOCK_WAIT": 0.3}
    before = saved[path]
    with rendering_elsewhere(path):
        response = Client().get(path, HTTP_IF_NONE_MATCH=before["ETag"])
    # It waited CACHE_LOCK_WAIT for the holder, then rendered the new version.
    assert polls
    assert "holds the render lock" in caplog.text
    assert response.status_code == 200
    assert response["ETag"] == etag_of(body_of(response)) != before["ETag"]
    assert response["Last-Modified"] == http_date(at(5).timestamp())


def _rewrite_entry(path: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Change the metadata the cache holds for the file at ``path``."""
    cache = sitemaps_conf.get_cache()
    key = cache_lookup(path).meta_key
    meta = cache.get(key)
    change(meta)
    cache.set(key, meta, timeout=None)


@pytest.mark.parametrize(
    "change",
    [
        # Rendered under versions read more than CACHE_STALE_SECONDS ago.
        lambda meta: meta.update(as_of=meta["as_of"] - 61),
        # Stored by a release that kept no time: how old it is is unknown.
        lambda meta: meta.pop("as_of"),
    ],
    ids=["too-old", "no-time"],
)
@pytest.mark.parametrize("path", [FILE, INDEX])
def test_a_version_older_than_the_bound_is_not_served(saved, settings, polls, path, change):
    settings.SITEMAPS_PLUS = {**CACHED, "CACHE_STALE_SECONDS": 60, "CACHE_LOCK_WAIT": 0.3}
    _rewrite_entry(path, change)
    before = saved[path]
    with rendering_elsewhere(path):
        response = Client().get(path, HTTP_IF_NONE_MATCH=before["ETag"])
    assert polls  # waited for the holder, as without a version to serve
    assert response.status_code == 200
    assert response["ETag"] == etag_of(body_of(response)) != before["ETag"]


def test_a_previous_version_whose_body_is_gone_is_not_served(saved, settings, polls):
    settings.SITEMAPS_PLUS = {**CACHED, "CACHE_LOCK_WAIT": 0.3}
    held = cache_lookup(FILE).held
    assert held is not None
    sitemaps_conf.get_cache().delete_many(entries.chunk_keys(cache_lookup(FILE).meta_key, held))
    with rendering_elsewhere(FILE):
        _, body = fetch(FILE)
    assert polls
    assert NEW_LOC in locs(body)


class Pages(Section):
    """A section without a model whose render a test holds midway."""

    name = "pages"
    paths = ["/a/"]
    renders = 0
    #: Called at the start of each render, while the renderer holds the lock.
    hold: Callable[[], object] = staticmethod(lambda: None)

    def items(self) -> list[str]:
        return list(type(self).paths)

    def page_entries(self, number, site, info=None):  # type: ignore[no-untyped-def]
        type(self).renders += 1
        type(self).hold()
        yield from super().page_entries(number, site, info)


PAGES = "/sitemap-pages-1.xml"


@pytest.fixture
def pages(settings, registry) -> Iterator[type[Pages]]:
    settings.SITEMAPS_PLUS = dict(CACHED)
    Pages.paths = ["/a/"]
    Pages.renders = 0
    register(Pages)
    yield Pages
    Pages.hold = staticmethod(lambda: None)


def _change(pages: type[Pages]) -> None:
    """What a save does: new content, and the section's token bumped."""
    pages.paths = ["/a/", "/b/"]
    versions.invalidate("pages")


@contextmanager
def rendering_in_a_thread(pages: type[Pages], until: threading.Event) -> Iterator[list[Any]]:
    """A thread requests the pages file and holds its render (and the render
    lock) until ``until`` is set; its response and body land in the list
    yielded once the block has ended. Renders of other threads go on."""
    rendering = threading.Event()

    def hold() -> None:
        if threading.current_thread() is holder:
            rendering.set()
            assert until.wait(10)

    pages.hold = staticmethod(hold)
    rendered: list[Any] = []
    holder = threading.Thread(target=lambda: rendered.append(fetch(PAGES)))
    holder.start()
    try:
        assert rendering.wait(10)
        yield rendered
    finally:
        until.set()
        holder.join(timeout=30)


def test_the_lock_holders_render_replaces_the_previous_version(pages, polls):
    old, old_body = fetch(PAGES)
    _change(pages)
    with rendering_in_a_thread(pages, threading.Event()) as rendered:
        # While the holder renders: the previous version, at once.
        stale, stale_body = fetch(PAGES)
        assert stale_body == old_body and stale["ETag"] == old["ETag"]
        assert Client().get(PAGES, HTTP_IF_NONE_MATCH=old["ETag"]).status_code == 304
    assert polls == []
    ((new, new_body),) = rendered
    assert locs(new_body) == ["https://example.com/a/", "https://example.com/b/"]
    # Stored: served from now on, the previous version no longer.
    again, again_body = fetch(PAGES, HTTP_IF_NONE_MATCH=old["ETag"])
    assert again.status_code == 200 and again_body == new_body
    assert again["ETag"] == new["ETag"] == etag_of(new_body)
    assert pages.renders == 2


@pytest.mark.parametrize("stale_seconds", [300, 0])
def test_a_cold_request_during_the_render_of_an_older_version(
    pages, settings, monkeypatch, stale_seconds
):
    """A request finds no entry while a render of the version before a change
    runs. With stale seconds, the file has one render lock: the request
    waits, and is served the holder's version (younger than the bound). With
    0, a lock per version, as before: it renders the current one itself."""
    settings.SITEMAPS_PLUS = {**CACHED, "CACHE_STALE_SECONDS": stale_seconds}
    waiting = threading.Event()
    real_wait = sitemap_cache._wait_for_entry

    def wait_for_entry(*args):  # type: ignore[no-untyped-def]
        waiting.set()  # the holder finishes once this request waits
        return real_wait(*args)

    monkeypatch.setattr(sitemap_cache, "_wait_for_entry", wait_for_entry)
    with rendering_in_a_thread(pages, waiting) as rendered:
        _change(pages)
        response, body = fetch(PAGES)
        waited = waiting.is_set()
    ((_, first_body),) = rendered
    assert response["ETag"] == etag_of(body)
    assert waited == bool(stale_seconds)
    if stale_seconds:
        assert body == first_body and pages.renders == 1
    else:
        assert locs(body) == ["https://example.com/a/", "https://example.com/b/"]
        assert pages.renders == 2


@pytest.mark.parametrize("stale_seconds", [300, 0])
def test_a_waiter_takes_the_lock_a_holder_gave_up(
    pages, settings, monkeypatch, caplog, stale_seconds
):
    """The holder releases the lock without storing anything (a 404, an
    error): a waiter takes the lock and renders under it, never beside
    the next holder."""
    settings.SITEMAPS_PLUS = {**CACHED, "CACHE_STALE_SECONDS": stale_seconds}
    cache = sitemaps_conf.get_cache()
    key = cache_lookup(PAGES).lock_key
    holder = locks.Lock(cache, key, 60)
    assert holder.take()
    real = locks.poll_delays

    def delays() -> Iterator[float]:
        for delay in real():
            holder.release()  # it gave up while this request waited
            yield delay

    monkeypatch.setattr(locks, "poll_delays", delays)
    held_by: list[object] = []
    pages.hold = staticmethod(lambda: held_by.append(cache.get(key)))
    response, body = fetch(PAGES)
    assert response.status_code == 200 and locs(body) == ["https://example.com/a/"]
    (token,) = held_by
    assert token is not None and token != holder.token  # the waiter's own
    assert "holds the render lock" not in caplog.text
    assert cache.get(key) is None  # and released


def test_the_render_does_not_hold_the_previous_versions_body(saved, monkeypatch):
    """The lookup reads the previous version's body with its tokens (to
    stand in at once while another process renders); the request that
    renders the new version drops it first, rather than holding a file's
    bytes through its render."""
    held_during_render: list[object] = []
    real = entries.render

    def render(cache: Any, where: Any, *args: Any) -> Any:
        held_during_render.append(where.prefetched)
        return real(cache, where, *args)

    monkeypatch.setattr(entries, "render", render)
    assert cache_lookup(FILE).prefetched  # the previous body, read with the lookup
    response, body = fetch(FILE, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200 and NEW_LOC.encode() in gzip.decompress(body)
    assert held_during_render == [None]
