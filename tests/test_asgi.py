"""Serving under ASGI: streamed with asynchronous iterators, never buffered,
with the same bytes and headers as under WSGI.

Handler level: every behaviour through Django's test ``Client`` (WSGI) and
``AsyncClient`` (ASGI), compared. Server level: a real uvicorn (and hypercorn)
started on a free port, on a SQLite file seeded by the test.
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import os
import socket
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.cache import cache as django_cache
from django.db import OperationalError, connection
from django.test import AsyncClient, Client
from django.utils.http import http_date

from django_sitemaps_plus import cache as sitemap_cache
from django_sitemaps_plus import register
from tests.testapp.models import Article
from tests.utils import articles, at

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[1]
SYNC_ITERATOR_WARNING = "must consume synchronous iterators"


async def _body(response: Any) -> bytes:
    if response.streaming:
        if response.is_async:
            return b"".join([chunk async for chunk in response.streaming_content])
        return b"".join(response.streaming_content)
    return bytes(response.content)


def asgi_get(path: str, **headers: str) -> tuple[Any, bytes]:
    """GET through Django's ASGI handler; no warning may be raised.

    ``headers`` as for the test Client (``HTTP_ACCEPT_ENCODING="gzip"``).
    """
    named = {key.removeprefix("HTTP_").replace("_", "-"): value for key, value in headers.items()}

    async def run() -> tuple[Any, bytes]:
        response = await AsyncClient().get(path, headers=named)
        return response, await _body(response)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response, body = async_to_sync(run)()
    assert not [w for w in caught if SYNC_ITERATOR_WARNING in str(w.message)]
    return response, body


def wsgi_get(path: str, **headers: str) -> tuple[Any, bytes]:
    response = Client().get(path, **headers)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body


@pytest.fixture
def section(registry, settings):
    register(Article, lastmod_fields=["updated_at"])
    articles(50, updated_at=at(1))


@pytest.mark.parametrize("cache", [False, True])
@pytest.mark.parametrize("path", ["/sitemap-articles-1.xml", "/sitemap.xml"])
def test_same_bytes_and_headers_under_both_handlers(section, settings, cache, path):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": cache}
    # Cold (the first request after a clear) and then warm, under each handler.
    answers = []
    for get in (wsgi_get, asgi_get):
        django_cache.clear()
        answers.append((get(path), get(path)))
    (cold_wsgi, warm_wsgi), (cold_asgi, warm_asgi) = answers
    for (ours_wsgi, body_wsgi), (ours_asgi, body_asgi) in [
        (cold_wsgi, cold_asgi),
        (warm_wsgi, warm_asgi),
    ]:
        assert ours_asgi.status_code == ours_wsgi.status_code == 200
        assert body_asgi == body_wsgi
        for header in ("Content-Type", "Last-Modified", "ETag", "X-Robots-Tag", "Vary"):
            assert ours_asgi.get(header) == ours_wsgi.get(header), header


@pytest.mark.parametrize("handler", ["wsgi", "asgi"])
def test_a_cold_file_after_a_save_settles_its_lastmod_after_the_body(section, settings, handler):
    # The layout kept by the index predates the save: the streamed response
    # goes out without waiting for the aggregate; the stored entry has it.
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    get = wsgi_get if handler == "wsgi" else asgi_get
    get("/sitemap.xml")
    Article.objects.filter(pk=3).update(updated_at=at(5))
    sitemap_cache.invalidate("articles")
    cold, cold_body = get("/sitemap-articles-1.xml")
    assert cold.streaming and "Last-Modified" not in cold
    warm, warm_body = get("/sitemap-articles-1.xml")
    assert warm_body == cold_body
    assert warm["Last-Modified"] == http_date(at(5).timestamp())


def test_an_uncached_file_streams_asynchronously(section, settings):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
    response, body = asgi_get("/sitemap-articles-1.xml")
    assert response.streaming and response.is_async
    assert body.count(b"<url>") == 50


def test_the_first_chunk_is_made_in_the_view_s_trip_to_the_sync_thread():
    # Made by the view (in the sync thread): the first chunk is produced at
    # once, so the first byte does not wait for another trip to that thread;
    # the rest is produced as it is sent. Made in the event loop: nothing is.
    import io

    from django.core.handlers.asgi import ASGIRequest

    request = ASGIRequest(
        {"type": "http", "method": "GET", "path": "/", "headers": []}, io.BytesIO()
    )
    made: list[bytes] = []

    def chunks() -> Iterator[bytes]:
        for chunk in (b"<a>", b"<b>", b"<c>"):
            made.append(chunk)
            yield chunk

    response = sitemap_cache.streaming_response(request, chunks(), "text/plain")
    assert made == [b"<a>"]

    async def read_all() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    assert async_to_sync(read_all)() == b"<a><b><c>"

    async def made_in_the_loop() -> list[bytes]:
        made.clear()
        sitemap_cache.streaming_response(request, chunks(), "text/plain")
        return list(made)

    assert async_to_sync(made_in_the_loop)() == []


def test_a_large_cached_file_streams_asynchronously(section, settings, monkeypatch):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    monkeypatch.setattr(sitemap_cache, "IN_MEMORY_BYTES", 10)
    wsgi_get("/sitemap-articles-1.xml")  # stored
    response, body = asgi_get("/sitemap-articles-1.xml")
    assert response.streaming and response.is_async
    assert body.count(b"<url>") == 50


@pytest.mark.parametrize("cache", [False, True])
def test_conditional_get_head_and_gzip(section, settings, cache):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": cache}
    first, plain = asgi_get("/sitemap-articles-1.xml")
    since = first["Last-Modified"]
    assert asgi_get("/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=since)[0].status_code == 304
    head = async_to_sync(AsyncClient().head)("/sitemap-articles-1.xml")
    assert head.status_code == 200 and head.content == b""
    zipped, data = asgi_get("/sitemap-articles-1.xml", HTTP_ACCEPT_ENCODING="gzip")
    if cache:
        assert zipped["Content-Encoding"] == "gzip"
        assert gzip.decompress(data) == plain
        etag = zipped["ETag"]
        again = asgi_get(
            "/sitemap-articles-1.xml", HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=etag
        )[0]
        assert again.status_code == 304
    else:
        assert data == plain


def test_database_down_is_a_503(section, settings):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}

    def refuse(execute, sql, params, many, context):
        raise OperationalError("could not connect to server")

    with connection.execute_wrapper(refuse):
        response, _ = asgi_get("/sitemap-articles-1.xml")
    assert response.status_code == 503
    assert response["Retry-After"]


def test_cache_down_falls_back_to_rendering(section, settings, monkeypatch):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}

    def down() -> Any:
        raise ConnectionError("cache unreachable")

    monkeypatch.setattr(sitemap_cache, "get_cache", down)
    response, body = asgi_get("/sitemap-articles-1.xml")
    assert response.status_code == 200
    assert body.count(b"<url>") == 50


@pytest.mark.parametrize("handler", ["wsgi", "asgi"])
def test_cache_down_is_logged_with_its_error(section, settings, monkeypatch, caplog, handler):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}

    def down() -> Any:
        raise ConnectionError("cache unreachable")

    monkeypatch.setattr(sitemap_cache, "get_cache", down)
    response, _ = (wsgi_get if handler == "wsgi" else asgi_get)("/sitemap-articles-1.xml")
    assert response.status_code == 200
    message = "Sitemap cache unavailable; rendering without it"
    [record] = [r for r in caplog.records if r.getMessage() == message]
    assert record.exc_info and record.exc_info[0] is ConnectionError


def test_the_views_are_sync_under_wsgi_and_async_under_asgi():
    from asgiref.sync import iscoroutinefunction

    from django_sitemaps_plus import views

    async def in_loop() -> bool:
        return iscoroutinefunction(views.section)

    # Django asks once per request, in the handler: only an event loop makes it async.
    assert not iscoroutinefunction(views.section)
    assert async_to_sync(in_loop)()


@pytest.mark.parametrize("gzip", [True, False])
def test_a_warm_file_is_read_through_the_async_cache_api(section, settings, gzip):
    from tests import recording_cache

    settings.CACHES = {
        "default": {"BACKEND": "tests.recording_cache.RecordingLocMemCache", "LOCATION": "asgi"}
    }
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    headers = {"HTTP_ACCEPT_ENCODING": "gzip"} if gzip else {}
    _, wsgi_body = wsgi_get("/sitemap-articles-1.xml", **headers)  # renders, stores
    recording_cache.calls.clear()
    response, body = asgi_get("/sitemap-articles-1.xml", **headers)
    assert response.status_code == 200
    assert body == wsgi_body
    # The lookup and the body: two async reads, no sync one from the view.
    assert recording_cache.calls.count("aget_many") == 2
    recording_cache.calls.clear()
    warm_wsgi_response, _ = wsgi_get("/sitemap-articles-1.xml", **headers)
    assert recording_cache.calls == ["get_many", "get_many"]
    assert response["ETag"] == warm_wsgi_response["ETag"]


@pytest.mark.parametrize("gzip", [True, False])
def test_a_warm_file_costs_one_trip_to_the_sync_thread(section, settings, monkeypatch, gzip):
    # Django's own backends: the file's description (it may query), the
    # lookup and the body in one trip (each trip costs about a millisecond).
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    headers = {"HTTP_ACCEPT_ENCODING": "gzip"} if gzip else {}
    _, wsgi_body = wsgi_get("/sitemap-articles-1.xml", **headers)  # renders, stores
    trips: list[tuple[str, ...]] = []
    real = sitemap_cache._drive_in_thread

    def counted(flow, op):  # type: ignore[no-untyped-def]
        done, following = real(flow, op)
        trips.append((type(op).__name__, "done" if done else type(following).__name__))
        return done, following

    monkeypatch.setattr(sitemap_cache, "_drive_in_thread", counted)
    response, body = asgi_get("/sitemap-articles-1.xml", **headers)
    assert response.status_code == 200 and response["ETag"]
    assert body == wsgi_body
    assert trips == [("_InSyncThread", "done")]


def test_a_backend_with_django_s_default_async_methods_is_read_in_two_round_trips(
    section, settings
):
    from tests import recording_cache

    settings.CACHES = {
        "default": {
            "BACKEND": "tests.recording_cache.SyncRecordingLocMemCache",
            "LOCATION": "asgi-sync",
        }
    }
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    wsgi_get("/sitemap-articles-1.xml")  # renders, stores
    recording_cache.calls.clear()
    response, body = asgi_get("/sitemap-articles-1.xml")
    assert response.status_code == 200 and body.count(b"<url>") == 50
    # Not one aget (a round trip) per key: the lookup and the body, as under WSGI.
    assert recording_cache.calls == ["get_many", "get_many"]


# A real server -----------------------------------------------------------------

SEED = textwrap.dedent(
    """
    import os, sys
    import django
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    django.setup()
    from django.core.management import call_command
    from tests.testapp.models import Article

    call_command("migrate", verbosity=0)
    Article.objects.bulk_create(
        Article(title=f"t{i}", slug=f"article-{i}") for i in range(int(sys.argv[1]))
    )
    """
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(
    command: list[str], database: Path, register: str = "articles"
) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "PYTHONPATH": str(ROOT),
        "SITEMAPS_TEST_REGISTER": register,
    }
    env.pop("CACHE_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", *[part.format(port=port) for part in command]],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    out = process.stdout.read() if process.stdout else ""
                    raise RuntimeError(f"server did not start: {out}") from None
                time.sleep(0.1)
        yield port, process
    finally:
        process.terminate()
        process.wait(timeout=30)


def _timed_get(port: int, path: str) -> tuple[int, bytes, float, float]:
    """Status, body, seconds to the first body byte, seconds in all."""
    started = time.perf_counter()
    connection_ = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection_.request("GET", path)
        response = connection_.getresponse()
        first = response.read(1)
        first_byte = time.perf_counter() - started
        body = first + response.read()
        return response.status, body, first_byte, time.perf_counter() - started
    finally:
        connection_.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    database = tmp_path_factory.mktemp("asgi") / "db.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", SEED, "16000"], cwd=ROOT, env=env, check=True)
    return database


@pytest.mark.parametrize(
    "command",
    [
        ["uvicorn", "tests.asgi:application", "--port", "{port}", "--log-level", "warning"],
        ["hypercorn", "tests.asgi:application", "--bind", "127.0.0.1:{port}"],
    ],
    ids=["uvicorn", "hypercorn"],
)
def test_a_real_asgi_server_streams_the_file(seeded, command):
    with server(command, seeded) as (port, process):
        # The index first, as a crawler reads it: it lays the section out
        # (pagination.py), which a file's first byte would otherwise wait for.
        assert _timed_get(port, "/sitemap.xml")[0] == 200
        status, body, first_byte, total = _timed_get(port, "/sitemap-articles-1.xml")
        process.terminate()
        log = process.stdout.read() if process.stdout else ""
    assert status == 200
    assert body.count(b"<url>") == 16000
    assert body.endswith(b"</urlset>\n")
    assert SYNC_ITERATOR_WARNING not in log
    # Streamed: the first byte long before the end (buffered, it came last).
    assert first_byte < 0.5 * total, (first_byte, total)


UVICORN = ["uvicorn", "tests.asgi:application", "--port", "{port}", "--log-level", "warning"]


def test_a_real_asgi_server_streams_a_cold_cached_file_and_stores_it(seeded):
    with server(UVICORN, seeded, register="cached") as (port, _):
        # A client that leaves after the first bytes: nothing half stored.
        left = socket.create_connection(("127.0.0.1", port))
        left.sendall(b"GET /sitemap-articles-1.xml HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert left.recv(1).startswith(b"H")
        left.close()
        started = time.monotonic()
        status, cold, first_byte, total = _timed_get(port, "/sitemap-articles-1.xml")
        # The lock was freed: no wait of CACHE_LOCK_WAIT (15 s) for a dead holder.
        assert time.monotonic() - started < 5
        warm = _timed_get(port, "/sitemap-articles-1.xml")[1]
    assert status == 200
    assert cold == warm and cold.count(b"<url>") == 16000 and cold.endswith(b"</urlset>\n")
    # Sent while rendered and stored, not after.
    assert first_byte < 0.5 * total, (first_byte, total)


def test_a_cold_file_is_rendered_once_under_concurrent_requests(seeded):
    import threading

    command = ["uvicorn", "tests.asgi:application", "--port", "{port}", "--log-level", "warning"]
    statuses: list[int] = []
    with server(command, seeded, register="counted") as (port, _):
        barrier = threading.Barrier(20)

        def get() -> None:
            barrier.wait()
            statuses.append(_timed_get(port, "/sitemap-counted-1.xml")[0])

        threads = [threading.Thread(target=get) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        renders = _timed_get(port, "/renders/")[1]
    assert statuses == [200] * 20
    rendered, waited = map(int, renders.split())
    # The requests ran at once (some waited on the lock), and one rendered.
    assert rendered == 1
    assert waited >= 1


# A cold file, streamed while it is stored ---------------------------------------

LARGE = "/sitemap-articles-1.xml"


@pytest.fixture
def large(registry, settings):
    """Caching on and a file past ``FLUSH_AT_BYTES`` (so a cold render streams)."""
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    register(Article, lastmod_fields=["updated_at"])
    articles(1500, updated_at=at(1))


def cache_state(path: str = LARGE) -> tuple[bool, bool]:
    """Whether the file's entry is stored, and whether its render lock is held."""
    where = _where(path)
    return where.entry is not None, sitemap_cache.get_cache().get(where.lock_key) is not None


def _where(path: str = LARGE) -> sitemap_cache.Lookup:
    """Where the view keeps the file at ``path`` (described as the view does)."""
    from django.test import RequestFactory
    from django.urls import resolve

    request = RequestFactory().get(path)
    match = resolve(path)
    site, source, _ = match.func.describe(request, *match.args, **match.kwargs)
    return sitemap_cache.run(
        sitemap_cache._lookup(sitemap_cache.get_cache(), site, request, source)
    )


@contextmanager
def keeping_the_connection() -> Iterator[None]:
    """As Django's test clients do around a request: the signals that end a
    request do not close the test's database connection (its transaction)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def read_cold(handler: str, path: str, leave: bool = False, **headers: str) -> dict[str, Any]:
    """Open ``path`` through ``handler``, read its first chunk, note the cache's
    state, then read the rest (or close the response: a client that left)."""
    seen: dict[str, Any] = {}
    if handler == "wsgi":
        response = Client().get(path, **headers)
        seen["response"] = response
        chunks = iter(response.streaming_content)
        seen["first"] = next(chunks)
        seen["during"] = cache_state(path)
        if leave:
            # The test client's iterator (its wrapper of ours): closing it closes
            # the response, as a WSGI server does when its client is gone.
            response._iterator.close()
        else:
            seen["body"] = seen["first"] + b"".join(chunks)
        return seen
    named = {key.removeprefix("HTTP_").replace("_", "-"): value for key, value in headers.items()}

    async def run() -> None:
        response = await AsyncClient().get(path, headers=named)
        seen["response"] = response
        assert response.is_async
        chunks = aiter(response.streaming_content)
        seen["first"] = await anext(chunks)
        seen["during"] = cache_state(path)
        seen["body"] = seen["first"] + b"".join([chunk async for chunk in chunks])

    async def run_and_leave() -> None:
        # Through Django's ASGI handler itself: the client disconnects once the
        # first body chunk is sent, as a crawler that gives up would.
        from django.core.handlers.asgi import ASGIHandler

        left = asyncio.Event()
        asked = [False]

        async def receive() -> dict[str, Any]:
            if not asked[0]:
                asked[0] = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await left.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if (
                message["type"] == "http.response.body"
                and message.get("body")
                and not left.is_set()
            ):
                seen["first"] = message["body"]
                seen["during"] = cache_state(path)
                left.set()

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"testserver")],
            "client": ("127.0.0.1", 1),
            "server": ("testserver", 80),
        }
        # ``handle``, not ``__call__``: its sync work in this test's thread (the
        # test's database connection), as the test clients run it.
        await ASGIHandler().handle(scope, receive, send)

    with keeping_the_connection(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async_to_sync(run_and_leave if leave else run)()
    assert not [w for w in caught if SYNC_ITERATOR_WARNING in str(w.message)]
    return seen


HANDLERS = pytest.mark.parametrize("handler", ["wsgi", "asgi"])


@HANDLERS
@pytest.mark.parametrize("gzip_", [False, True], ids=["plain", "gzip"])
def test_a_large_cold_file_is_sent_while_it_is_stored(large, handler, gzip_):
    headers = {"HTTP_ACCEPT_ENCODING": "gzip"} if gzip_ else {}
    cold = read_cold(handler, LARGE, **headers)
    response = cold["response"]
    assert response.status_code == 200 and response.streaming
    # The first chunk left while the render went on: not stored yet, lock held.
    assert cold["during"] == (False, True)
    assert cache_state() == (True, False)
    warm, warm_body = (wsgi_get if handler == "wsgi" else asgi_get)(LARGE, **headers)
    assert cold["body"] == warm_body
    assert (gzip.decompress(warm_body) if gzip_ else warm_body).count(b"<url>") == 1500
    for header in ("Content-Type", "Last-Modified", "Vary", "Content-Encoding", "X-Robots-Tag"):
        assert response.get(header) == warm.get(header), header
    # Known only at the end: the cold response has no ETag and no length.
    assert "ETag" not in response and "Content-Length" not in response
    assert warm["ETag"]


@HANDLERS
def test_a_client_leaving_a_cold_stream_stores_nothing_and_frees_the_lock(large, handler):
    left = read_cold(handler, LARGE, leave=True)
    assert left["during"] == (False, True)
    assert cache_state() == (False, False)
    # The next request renders the whole file (no half entry was kept).
    _, body = (wsgi_get if handler == "wsgi" else asgi_get)(LARGE)
    assert body.count(b"<url>") == 1500 and body.endswith(b"</urlset>\n")
    assert cache_state() == (True, False)


@HANDLERS
def test_a_render_failing_midway_stores_nothing(registry, settings, handler):
    from django_sitemaps_plus import ModelSection

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    failing = [True]

    class Failing(ModelSection):
        name = "articles"

        def page_entries(self, number, site, info=None):  # type: ignore[no-untyped-def]
            for count, entry in enumerate(super().page_entries(number, site, info)):
                if failing[0] and count == 1200:
                    raise RuntimeError("the database went away")
                yield entry

    register(Article)(Failing)
    articles(1500)
    with pytest.raises(RuntimeError):
        read_cold(handler, LARGE)
    assert cache_state() == (False, False)
    failing[0] = False
    _, body = (wsgi_get if handler == "wsgi" else asgi_get)(LARGE)
    assert body.count(b"<url>") == 1500


@HANDLERS
def test_a_cold_request_conditional_on_the_etag_is_answered_whole(large, handler):
    get = wsgi_get if handler == "wsgi" else asgi_get
    get(LARGE)  # cold: streamed, no ETag
    etag = get(LARGE)[0]["ETag"]
    sitemap_cache.invalidate("articles")  # cold again, same bytes
    again, _ = get(LARGE, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    sitemap_cache.invalidate("articles")
    other, body = get(LARGE, HTTP_IF_NONE_MATCH='"other"')
    assert other.status_code == 200 and other["ETag"] == etag
    assert body.count(b"<url>") == 1500


@HANDLERS
def test_a_hit_decides_its_conditional_response_once(section, settings, monkeypatch, handler):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    get = wsgi_get if handler == "wsgi" else asgi_get
    get("/sitemap-articles-1.xml")  # stored
    decided = []
    real = sitemap_cache.get_conditional_response

    def counting(*args: Any, **kwargs: Any) -> Any:
        decided.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sitemap_cache, "get_conditional_response", counting)
    response, body = get("/sitemap-articles-1.xml")
    assert response.status_code == 200 and body.count(b"<url>") == 50
    assert len(decided) == 1


def test_a_cold_render_whose_client_left_before_the_response_frees_the_lock(large, monkeypatch):
    # Django cancels an async view whose client disconnects; the sync thread's
    # work (prepare, the first chunks of the render) runs to its end anyway.
    import threading

    from django_sitemaps_plus.registry import site

    reached, go = threading.Event(), threading.Event()
    section_ = site.get("articles")

    def held(real):  # type: ignore[no-untyped-def]
        def info(number, site_):  # type: ignore[no-untyped-def]
            reached.set()
            go.wait(10)
            return real(number, site_)

        return info

    # The file's info, before its render: page_info, or for a plain GET the
    # layout's listed_info.
    monkeypatch.setattr(section_, "page_info", held(section_.page_info))
    monkeypatch.setattr(section_, "listed_info", held(section_.listed_info))

    async def run() -> None:
        request = await _request_once(reached, "the file's info")
        request.cancel()
        go.set()
        with pytest.raises(asyncio.CancelledError):
            await request

    async_to_sync(run)()
    assert cache_state() == (False, False)


def _gated_cache(settings: Any, held: str) -> Any:
    """A cache whose own ``aadd``/``aget`` hold at ``held`` (tests.recording_cache)."""
    from tests import recording_cache

    settings.CACHES = {
        "default": {"BACKEND": "tests.recording_cache.GatedLocMemCache", "LOCATION": "gated"}
    }
    sitemap_cache.get_cache().clear()
    recording_cache.gate.hold(held)
    return recording_cache.gate


async def _request_once(reached: Any, what: str) -> asyncio.Future[Any]:
    """A GET of the large file, returned once ``reached`` (an event the
    request sets from its thread or its task) is set: ``what`` it waits at."""
    request = asyncio.ensure_future(AsyncClient().get(LARGE))
    deadline = time.monotonic() + 10
    while not reached.is_set():
        assert time.monotonic() < deadline, f"the request never reached {what}"
        await asyncio.sleep(0.01)
    return request


async def _request_held_at_the_gate(gate: Any) -> asyncio.Future[Any]:
    """A GET of the large file, returned once its cache call waits at ``gate``."""
    return await _request_once(gate.reached, gate.method)


@pytest.mark.parametrize("held", ["aadd", "aget"])
def test_a_client_that_left_during_an_own_async_cache_call_frees_the_lock(large, settings, held):
    """With a backend whose async methods are its own (a natively async
    one), the request is cancelled while the render lock's ``aadd`` (it has
    succeeded, the flow does not know yet) or the ``aget`` after it (is the
    file stored meanwhile?) is in flight: the call ends, the flow learns its
    outcome and frees the lock at once, not after ``CACHE_LOCK_TIMEOUT``."""
    gate = _gated_cache(settings, held)

    async def run() -> None:
        request = await _request_held_at_the_gate(gate)
        request.cancel()
        gate.release()
        with pytest.raises(asyncio.CancelledError):
            await request

    try:
        async_to_sync(run)()
    finally:
        gate.release()
    assert gate.locked
    assert cache_state() == (False, False)
    # And the next request renders and stores the file.
    gate.hold("none")
    response, body = asgi_get(LARGE)
    assert response.status_code == 200 and body.count(b"<url>") == 1500
    assert cache_state() == (True, False)


def test_a_client_cancelled_twice_during_an_own_async_cache_call_frees_the_lock(large, settings):
    """Cancelled again while its cleanup waits for the ``aadd`` in flight (a
    server shutting down, a timeout around the view): the cleanup still runs
    to its end and frees the lock."""
    gate = _gated_cache(settings, "aadd")
    cache = sitemap_cache.get_cache()
    lock_key = _where().lock_key

    async def run() -> None:
        request = await _request_held_at_the_gate(gate)
        request.cancel()
        await asyncio.sleep(0.05)
        request.cancel()
        await asyncio.sleep(0.05)
        gate.release()
        with pytest.raises(asyncio.CancelledError):
            await request
        # The cleanup goes on after the request ended: give it two seconds.
        settled = time.monotonic() + 2
        while cache.get(lock_key) is not None and time.monotonic() < settled:
            await asyncio.sleep(0.01)

    try:
        async_to_sync(run)()
    finally:
        gate.release()
    assert gate.locked
    assert cache_state() == (False, False)


def test_a_client_that_left_while_waiting_for_another_render_leaves_its_lock(large, monkeypatch):
    """A request waiting (polling) for another request's render is cancelled:
    its flow is abandoned where it waits, and it never releases the lock it
    does not hold."""
    import threading

    cache = sitemap_cache.get_cache()
    lock_key = _where().lock_key
    cache.set(lock_key, "another request's token", 60)
    polling = threading.Event()
    abandoned: list[tuple[bool, str]] = []
    real_delays, real_abandon = sitemap_cache._poll_delays, sitemap_cache._abandon

    def delays() -> Iterator[float]:
        for delay in real_delays():
            polling.set()
            yield delay

    def abandon(flow: Any, done: bool, op: Any) -> None:
        abandoned.append((done, type(op).__name__))
        real_abandon(flow, done, op)

    monkeypatch.setattr(sitemap_cache, "_poll_delays", delays)
    monkeypatch.setattr(sitemap_cache, "_abandon", abandon)

    async def run() -> None:
        request = await _request_once(polling, "the wait for the lock")
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request

    async_to_sync(run)()
    # Abandoned mid-wait (at a pause, or at the lock's next poll).
    assert [done for done, _ in abandoned] == [False]
    assert cache.get(lock_key) == "another request's token"
    assert cache_state() == (False, True)
