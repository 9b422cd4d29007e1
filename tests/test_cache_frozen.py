"""A cache server that stops answering: requests take the cache-down path
within the socket timeout (W005 asks for one), instead of waiting for it.

Runs a real redis-server on a free port and freezes it with SIGSTOP.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from django_sitemaps_plus import register
from django_sitemaps_plus.checks import check_cache_timeouts
from tests.testapp.models import Article
from tests.utils import articles, fetch, locs

pytestmark = pytest.mark.django_db

REDIS = "django.core.cache.backends.redis.RedisCache"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def redis_server() -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed (CI installs it)")
        pytest.skip("redis-server is not installed")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield process, port
    finally:
        process.send_signal(signal.SIGCONT)
        process.terminate()
        process.wait(timeout=10)


def _sitemap_cache(port: int, **options: float) -> dict[str, object]:
    return {"BACKEND": REDIS, "LOCATION": f"redis://127.0.0.1:{port}/0", "OPTIONS": options}


@pytest.mark.slow
def test_a_frozen_cache_costs_a_request_its_timeout_only(
    settings, registry, redis_server, monkeypatch, caplog
):
    process, port = redis_server
    settings.CACHES = {
        **settings.CACHES,
        "sitemaps": _sitemap_cache(port, socket_timeout=0.5, socket_connect_timeout=0.5),
    }
    settings.SITEMAPS_PLUS = {
        "BASE_URL": "https://example.com",
        "CACHE": True,
        "CACHE_ALIAS": "sitemaps",
    }
    register(Article)
    articles(3)
    assert len(locs(fetch("/sitemap-articles-1.xml")[1])) == 3  # warm
    from redis.connection import AbstractConnection
    from redis.exceptions import TimeoutError as RedisTimeout

    # Every read from the frozen server that timed out (retries included).
    timeouts: list[str] = []
    read_response = AbstractConnection.read_response

    def counting(self: AbstractConnection, *args: object, **kwargs: object) -> object:
        try:
            return read_response(self, *args, **kwargs)  # type: ignore[arg-type]
        except RedisTimeout:
            timeouts.append(f"{self.host}:{self.port}")
            raise

    monkeypatch.setattr(AbstractConnection, "read_response", counting)
    process.send_signal(signal.SIGSTOP)
    # Answered while the server is still frozen (it resumes at teardown).
    response, body = fetch("/sitemap-articles-1.xml")
    assert response.status_code == 200
    assert len(locs(body)) == 3
    # Each cache call that failed cost one socket timeout, no retry, and the
    # request made few of them (the lookup, the layout): far from "forever".
    failed = [r for r in caplog.records if r.getMessage().startswith("Sitemap cache unavailable")]
    assert failed
    assert all(r.exc_info and isinstance(r.exc_info[1], RedisTimeout) for r in failed)
    assert 1 <= len(timeouts) == len(failed) <= 2
    assert set(timeouts) == {f"127.0.0.1:{port}"}


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
