"""The breaker every cache call goes through (``django_sitemaps_plus.serving.quiet``).

The real servers frozen and killed are in test_cache_frozen.py; here a
local-memory cache that fails on demand shows the breaker's own rules, on
a clock the tests move.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import pytest
from django.core.cache.backends.locmem import LocMemCache
from django.test import override_settings

from django_sitemaps_plus.serving import quiet

WINDOW = 5.0


class FlakyCache(LocMemCache):
    """A real local-memory cache whose ``get`` fails while ``down`` is set,
    and waits at ``gate`` (when set) before it answers."""

    down = False
    gate: threading.Event | None = None
    gets = 0

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        type(self).gets += 1
        if type(self).gate is not None:
            assert type(self).gate.wait(10)
        if type(self).down:
            raise ConnectionError("cache unreachable")
        return super().get(key, default, version)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(quiet, "_now", clock)
    return clock


@pytest.fixture
def flaky(settings, clock):
    settings.SITEMAPS_PLUS = {"CACHE_BREAKER_SECONDS": WINDOW}
    FlakyCache.down, FlakyCache.gate, FlakyCache.gets = False, None, 0
    yield FlakyCache("flaky", {})
    FlakyCache.down, FlakyCache.gate = False, None


def test_after_a_failure_the_cache_is_not_asked_until_the_window_has_passed(flaky, clock, caplog):
    FlakyCache.down = True
    with pytest.raises(quiet.CacheDown):
        quiet.call(flaky, "get", "k")
    FlakyCache.down = False
    with pytest.raises(quiet.CacheDown):
        quiet.call(flaky, "get", "k")
    assert quiet.quietly("fallback", flaky, "get", "k") == "fallback"
    assert quiet.is_open() and quiet.available() is None
    assert FlakyCache.gets == 1
    failed_at = clock.now
    clock.now = failed_at + WINDOW - 1
    assert quiet.is_open()
    clock.now = failed_at + WINDOW
    assert quiet.call(flaky, "get", "k") is None
    assert not quiet.is_open() and FlakyCache.gets == 2
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [quiet.DOWN_MESSAGE, quiet.BACK_MESSAGE]


def test_one_call_tries_the_cache_again_while_the_others_keep_away(flaky, clock):
    FlakyCache.down = True
    with pytest.raises(quiet.CacheDown):
        quiet.call(flaky, "get", "k")
    clock.now += WINDOW
    FlakyCache.gate = threading.Event()
    trial = threading.Thread(target=lambda: quiet.quietly(None, flaky, "get", "k"))
    trial.start()
    deadline = time.monotonic() + 10
    while FlakyCache.gets < 2 and time.monotonic() < deadline:
        time.sleep(0.001)  # until the trial has reached the cache
    with pytest.raises(quiet.CacheDown):
        quiet.call(flaky, "get", "k")  # not asked while the trial is out
    assert FlakyCache.gets == 2
    FlakyCache.gate.set()
    trial.join(10)
    # The trial failed: another window, no call.
    with pytest.raises(quiet.CacheDown):
        quiet.call(flaky, "get", "k")
    assert FlakyCache.gets == 2


def test_an_answer_raised_as_an_error_is_not_a_failure(flaky):
    with pytest.raises(ValueError):
        quiet.Guarded(flaky).incr("missing")
    assert not quiet.is_open()


def test_changed_settings_close_the_breaker(flaky):
    FlakyCache.down = True
    with pytest.raises(quiet.CacheDown):
        quiet.call(flaky, "get", "k")
    assert quiet.is_open()
    with override_settings(SITEMAPS_PLUS={"CACHE_BREAKER_SECONDS": 60}):
        assert not quiet.is_open()


def test_a_lock_is_released_while_the_breaker_is_open(settings):
    """Another thread's failed call opens the breaker; a holder's release still
    frees its lock (else every request for the file waits out its expiry)."""
    from django_sitemaps_plus.conf import get_cache
    from django_sitemaps_plus.serving import locks

    settings.SITEMAPS_PLUS = {"CACHE": True, "CACHE_BREAKER_SECONDS": 60}
    cache = get_cache()
    lock = locks.Lock(cache, "sitemaps_plus:test-lock", 60)
    assert lock.take()
    quiet.failed(ConnectionError("another thread's call timed out"))
    assert quiet.is_open()
    lock.release()
    assert cache.get("sitemaps_plus:test-lock") is None


class _Moved:
    """Stands for a class of an older version of the package, since moved."""


def test_an_entry_written_by_another_version_is_a_miss_not_a_failure(caplog, monkeypatch):
    """An entry whose class cannot be loaded any more (a module moved between
    versions, a rolling deploy) is dropped and read as missing: the breaker
    stays closed and the other keys of the same ``get_many`` are read."""
    cache = LocMemCache("unreadable", {})
    cache.set("old", _Moved())
    cache.set("older", _Moved())
    cache.set("new", 1)
    monkeypatch.delattr(sys.modules[__name__], "_Moved")  # gone, as after an upgrade
    with caplog.at_level("WARNING", logger="django_sitemaps_plus"):
        assert quiet.call(cache, "get_many", ["old", "new", "absent"]) == {"new": 1}
        assert quiet.call(cache, "get", "older", "fallback") == "fallback"
        assert quiet.call(cache, "get", "new") == 1
    assert not quiet.is_open()
    assert "written by another version of the package" in caplog.text
    assert "old" not in cache and "older" not in cache  # dropped: a plain miss next time
    cache.set("old", 2)
    assert quiet.call(cache, "get", "old") == 2
