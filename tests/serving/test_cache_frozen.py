"""A cache server that stops answering or dies: a request fails one cache
call at most (after the socket timeout W005 asks for), then the process
leaves the cache alone for CACHE_BREAKER_SECONDS and renders each file one
request at a time; once the server is back, the cache is used again.

Runs a real redis-server of its own on a free port, and freezes it
(SIGSTOP), resumes it (SIGCONT) or kills it; the shared one is never touched.
Failed calls are counted by the backend (``CountingRedisCache``), never by
the clock.
"""

from __future__ import annotations

import asyncio
import gc
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import django
import pytest
from django.core.checks import run_checks
from django.test import override_settings

from django_sitemaps_plus import register
from django_sitemaps_plus.checks import check_cache_timeouts
from django_sitemaps_plus.sections import Section
from django_sitemaps_plus.serving import locks, quiet
from tests.recording_cache import redis_calls
from tests.serving.test_asgi import asgi_get, http_scope
from tests.testapp.models import Article
from tests.utils import articles, fetch, free_port, locs, require_module, unavailable

pytestmark = pytest.mark.django_db

REDIS = "django.core.cache.backends.redis.RedisCache"


#: No persistence: the server's data lives as long as its process.
_EPHEMERAL = ("--save", "", "--appendonly", "no")


class PrivateRedis:
    """A redis-server of this test's own, on a free port: frozen, resumed,
    killed and started again without touching any other server."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", *_EPHEMERAL],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def signal(self, number: int) -> None:
        assert self.process is not None
        self.process.send_signal(number)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    binary = shutil.which("redis-server")
    if binary is None:
        unavailable("redis-server is not installed (CI installs it)")
    # Without redis-py the cache fails before any call: nothing to count.
    require_module("redis")
    server = PrivateRedis(binary)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("backend", "options", "missing"),
    [
        (REDIS, {}, "socket_timeout or socket_connect_timeout"),
        (REDIS, {"socket_timeout": 1}, "socket_connect_timeout"),
        ("django_redis.cache.RedisCache", {"SOCKET_TIMEOUT": 1}, "SOCKET_CONNECT_TIMEOUT"),
        ("django.core.cache.backends.memcached.PyMemcacheCache", {}, "timeout or connect"),
    ],
)
def test_w005_no_socket_timeout(backend, options, missing):
    # The backend is never connected to: the check reads the settings only.
    caches = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sitemaps": {"BACKEND": backend, "LOCATION": "x", "OPTIONS": options},
    }
    with override_settings(CACHES=caches, SITEMAPS_PLUS={"CACHE_ALIAS": "sitemaps"}):
        found = [m for m in check_cache_timeouts() if m.id.endswith("W005")]
    (message,) = found
    assert missing in message.msg


def test_w005_quiet_with_timeouts_or_without_the_cache(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": REDIS,
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_timeout": 1, "socket_connect_timeout": 1},
        }
    }
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com"}
    assert not [m for m in run_checks(include_deployment_checks=True) if m.id.endswith("W005")]
    settings.CACHES["default"]["OPTIONS"] = {}
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
    assert not [m for m in run_checks(include_deployment_checks=True) if m.id.endswith("W005")]


# A cache that stops answering, or dies: one failed call, then the breaker --------

WARM, COLD = "/sitemap-articles-1.xml", "/sitemap.xml"


def _serve_from_counted_redis(settings: Any, port: int, breaker: float) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "sitemaps": {
            "BACKEND": "tests.recording_cache.CountingRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_timeout": 0.3, "socket_connect_timeout": 0.3},
        },
    }
    settings.SITEMAPS_PLUS = {
        "BASE_URL": "https://example.com",
        "CACHE": True,
        "CACHE_ALIAS": "sitemaps",
        "CACHE_BREAKER_SECONDS": breaker,
    }


def _assert_correct(path: str, get: Callable[[str], tuple[Any, bytes]] = fetch) -> Any:
    """GET ``path``: a 200 with the right body (the three articles, or the
    index naming their file); the response."""
    response, body = get(path)
    assert response.status_code == 200
    if path == WARM:
        assert locs(body) == [f"https://example.com/articles/article-{i}/" for i in range(3)]
    else:
        assert locs(body) == ["https://example.com/sitemap-articles-1.xml"]
    return response


def _logged(caplog: Any, message: str) -> int:
    return sum(1 for record in caplog.records if record.getMessage() == message)


def _reads_only(calls: list[tuple[str, str]]) -> bool:
    """Whether ``calls`` are reads that all succeeded (a warm file's hit)."""
    return bool(calls) and set(calls) <= {("get_many", "ok"), ("get", "ok")}


def _past_the_breaker_window(seconds: float) -> None:
    time.sleep(seconds + 0.2)  # a pause, not a measure: nothing asserts time


@pytest.mark.slow
@pytest.mark.cache
@pytest.mark.parametrize("first", [WARM, COLD], ids=["warm-first", "cold-first"])
def test_a_frozen_cache_costs_one_failed_call_then_is_left_alone_until_it_answers(
    settings, registry, private_redis, caplog, first
):
    _serve_from_counted_redis(settings, private_redis.port, breaker=2)
    register(Article)
    articles(3)
    _assert_correct(WARM)  # warm; the index stays cold
    redis_calls.clear()
    private_redis.signal(signal.SIGSTOP)

    # The first request's first call times out; the request goes on without the cache.
    _assert_correct(first)
    [(_, outcome)] = redis_calls
    assert outcome == "failed"
    redis_calls.clear()
    # Within the breaker's window: the other file, and both again, ask the cache nothing.
    for path in [COLD if first == WARM else WARM, WARM, COLD]:
        _assert_correct(path)
    assert redis_calls == []
    assert _logged(caplog, quiet.DOWN_MESSAGE) == 1

    private_redis.signal(signal.SIGCONT)
    _past_the_breaker_window(2)
    _assert_correct(WARM)
    assert _reads_only(redis_calls)  # a hit: the file came from the cache again
    assert _logged(caplog, quiet.BACK_MESSAGE) == 1


@pytest.mark.slow
@pytest.mark.cache
@pytest.mark.parametrize("handler", ["wsgi", "asgi"])
def test_a_killed_cache_costs_one_failed_call_and_is_used_again_once_it_is_back(
    settings, registry, private_redis, caplog, handler
):
    get = fetch if handler == "wsgi" else asgi_get
    _serve_from_counted_redis(settings, private_redis.port, breaker=1)
    register(Article)
    articles(3)
    _assert_correct(WARM, get)
    redis_calls.clear()
    private_redis.kill()

    _assert_correct(WARM, get)
    [(_, outcome)] = redis_calls
    assert outcome == "failed"
    redis_calls.clear()
    for path in [COLD, WARM, COLD]:
        _assert_correct(path, get)
    assert redis_calls == []

    # The window has passed, the server is still dead: one call tries, fails,
    # and the next window begins.
    _past_the_breaker_window(1)
    _assert_correct(COLD, get)
    _assert_correct(WARM, get)
    [(_, outcome)] = redis_calls
    assert outcome == "failed"
    redis_calls.clear()

    private_redis.start()  # a new, empty server on the same port
    _past_the_breaker_window(1)
    stored = _assert_correct(WARM, get)  # the new server is empty: rendered into it
    assert ("set", "ok") in redis_calls
    assert {outcome for _, outcome in redis_calls} == {"ok"}
    redis_calls.clear()
    assert _assert_correct(WARM, get)["ETag"] == stored["ETag"]
    assert _reads_only(redis_calls)  # a hit: the file came from the cache
    assert _logged(caplog, quiet.DOWN_MESSAGE) == 1
    assert _logged(caplog, quiet.BACK_MESSAGE) == 1


@pytest.mark.cache
def test_a_breaker_of_zero_seconds_asks_the_cache_on_every_call(
    settings, registry, private_redis, caplog
):
    _serve_from_counted_redis(settings, private_redis.port, breaker=0)
    register(Article)
    articles(3)
    _assert_correct(WARM)
    private_redis.kill()
    for _ in range(2):
        redis_calls.clear()
        _assert_correct(WARM)
        assert ("get_many", "failed") in redis_calls
    assert _logged(caplog, quiet.DOWN_MESSAGE) == 1  # still logged once


class TrackedSection(Section):
    """A section without a model that counts its renders running at once."""

    writes_own_entries = True

    name = "tracked"
    requests = 4
    arriving = 0
    active = 0
    most = 0
    renders = 0
    guard = threading.Lock()

    def items(self) -> list[str]:
        return ["home", "about"]

    def location(self, item: str) -> str:
        return f"/{item}/"

    def page_entries(self, number: int, site: Any, info: Any = None) -> Iterator[Any]:
        cls = type(self)
        with cls.guard:
            cls.active += 1
            cls.most = max(cls.most, cls.active)
            cls.renders += 1
            first = cls.renders == 1
        try:
            # The first render goes on once the ``arriving`` requests have
            # come to the file's local lock (waiting, or rendering beside it
            # without one).
            deadline = time.monotonic() + 5
            while first and _lock_users() < cls.arriving and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.05)
            yield from super().page_entries(number, site, info)
        finally:
            with cls.guard:
                cls.active -= 1


def _lock_users() -> int:
    return sum(users for _, users in locks._local.values())


@pytest.mark.cache
@pytest.mark.django_db(transaction=True)
def test_while_the_cache_is_down_a_process_renders_a_file_once_at_a_time(
    settings, registry, private_redis
):
    _serve_from_counted_redis(settings, private_redis.port, breaker=60)
    register(TrackedSection)
    private_redis.kill()
    assert fetch("/sitemap-tracked-1.xml")[0].status_code == 200  # opens the breaker
    TrackedSection.active = TrackedSection.most = TrackedSection.renders = 0
    TrackedSection.arriving = TrackedSection.requests
    redis_calls.clear()
    bodies: list[bytes] = []
    barrier = threading.Barrier(TrackedSection.requests)

    def get() -> None:
        barrier.wait()
        response, body = fetch("/sitemap-tracked-1.xml")
        assert response.status_code == 200
        bodies.append(body)

    threads = [threading.Thread(target=get) for _ in range(TrackedSection.requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(bodies) == TrackedSection.requests
    assert {tuple(locs(body)) for body in bodies} == {
        ("https://example.com/home/", "https://example.com/about/")
    }
    assert TrackedSection.renders == TrackedSection.requests
    assert TrackedSection.most == 1  # one at a time, never side by side
    assert redis_calls == []
    assert locks._local == {}  # every request freed the lock


class _Gated(Section):
    """A section whose items wait for ``gate``: the view is still running
    when its client leaves."""

    name = "gated"
    entered = threading.Event()
    gate = threading.Event()

    def items(self) -> list[str]:
        self.entered.set()
        assert self.gate.wait(60), "the test never opened the gate"
        return ["/a/", "/b/"]


def _asgi_request_that_leaves(path: str, left: threading.Event) -> None:
    """GET ``path`` through Django's ASGI handler; the client disconnects
    right after its request (``left`` is set when the handler hears it)."""
    from django.core.asgi import get_asgi_application

    application = get_asgi_application()
    received = 0
    opening: list[asyncio.Future[None]] = []

    async def _open_the_gate_later() -> None:
        for _ in range(50):
            await asyncio.sleep(0)
        _Gated.gate.set()

    async def receive() -> dict[str, object]:
        nonlocal received
        received += 1
        if received == 1:
            return {"type": "http.request", "body": b"", "more_body": False}
        if received == 2:
            # Leave once the view runs (under the local lock, in its items());
            # let the view go on a few turns of the loop later, once the
            # handler has cancelled the request it was answering.
            assert await asyncio.to_thread(_Gated.entered.wait, 60)
            left.set()
            opening.append(asyncio.ensure_future(_open_the_gate_later()))
            return {"type": "http.disconnect"}
        await asyncio.Event().wait()  # nothing more from a client that left
        return {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        pass

    scope = http_scope(path, host="example.com", scheme="https")
    asyncio.run(application(scope, receive, send))


@pytest.mark.skipif(
    django.VERSION < (5, 0), reason="Django 4.2's handler lets a view end after its client left"
)
def test_a_client_leaving_while_the_cache_is_down_frees_the_local_render_lock(settings, registry):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    register(_Gated)
    quiet.failed(ConnectionError("the cache went away"))  # renders under the local lock
    _Gated.gate.clear()
    _Gated.entered.clear()
    left = threading.Event()
    request = threading.Thread(
        target=_asgi_request_that_leaves, args=("/sitemap-gated-1.xml", left)
    )
    request.start()
    assert left.wait(60)
    request.join(60)  # the view ended after its client had gone
    assert not request.is_alive()
    deadline = time.monotonic() + 60  # bounds the wait; the test asserts no time
    while locks._local and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    assert not locks._local, "the local render lock outlived a request whose client left"
