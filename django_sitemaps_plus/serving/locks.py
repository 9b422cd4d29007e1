"""The one lock of the package: a key in the sitemap cache, held by a token.

Used for a cold file's render (``cache``), a build to a storage that is
not a file system (``build``) and an IndexNow submission run
(``indexnow``). ``take`` is ``cache.add`` (one process wins; the key
expires after ``timeout`` seconds, so a holder that dies frees it),
``release`` deletes the key only while it still holds this lock's token
(never one that expired and was taken again), ``renew`` pushes the expiry
back, ``wait_or_take`` polls until the holder has left what the waiter
wants or the lock is free to take, up to ``CACHE_LOCK_WAIT``.

Every call goes through the breaker (``quiet``): while the cache is down, no
lock is taken in it, and ``LocalLock`` serialises a process's renders of one
file instead.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving import quiet

if TYPE_CHECKING:
    from django.core.cache import BaseCache

T = TypeVar("T")

logger = logging.getLogger("django_sitemaps_plus")

#: Pauses between two polls of a waiter (the last one repeats).
POLL_SECONDS = (0.02, 0.05, 0.1, 0.2)


def poll_delays() -> Iterator[float]:
    """The pauses between polls for a lock's holder, up to ``CACHE_LOCK_WAIT``."""
    deadline = time.monotonic() + conf.CACHE_LOCK_WAIT
    attempt = 0
    while time.monotonic() < deadline:
        yield POLL_SECONDS[min(attempt, len(POLL_SECONDS) - 1)]
        attempt += 1


class Lock:
    """The lock ``key`` of ``cache``, as one holder (its own token) sees it."""

    def __init__(self, cache: BaseCache, key: str, timeout: int) -> None:
        self.cache = cache
        self.key = key
        self.timeout = timeout
        self.token = uuid.uuid4().hex

    def take(self) -> bool:
        """Whether this holder took the lock (raises ``quiet.CacheDown``)."""
        return bool(quiet.call(self.cache, "add", self.key, self.token, timeout=self.timeout))

    def release(self) -> None:
        """Free the lock if this holder still holds it; a cache that is down
        frees it by its expiry. Asked even while the breaker is open (another
        thread's call failed): a lock left held would make every request for
        the file wait until it expires."""
        try:
            if self.cache.get(self.key) == self.token:
                self.cache.delete(self.key)
        except Exception as error:  # the cache's own errors: the expiry frees it
            logger.debug("Could not release the lock %s: %s", self.key, error)

    def renew(self) -> None:
        """Expire ``timeout`` seconds from now (raises ``quiet.CacheDown``)."""
        quiet.call(self.cache, "touch", self.key, self.timeout)

    def wait_or_take(self, ready: Callable[[], T | None]) -> tuple[bool, T | None]:
        """Poll, between ``poll_delays()``, for what the holder leaves:
        ``(False, found)`` once ``ready()`` returns something; ``(True,
        None)`` when the holder released the lock leaving nothing ``ready``
        accepts (it gave up, or died and its lock expired) and this holder
        took it; ``(False, None)`` when ``CACHE_LOCK_WAIT`` ran out. The lock
        is read before ``ready()``: a holder leaves what it made before it
        releases, so a lock found free and nothing ready means it gave up
        (read the other way round, a holder finishing between the two reads
        would look like one that gave up). Raises ``quiet.CacheDown``."""
        for delay in poll_delays():
            time.sleep(delay)
            held = quiet.call(self.cache, "get", self.key) is not None
            found = ready()
            if found is not None:
                return False, found
            if not held and self.take():
                return True, None
        return False, None


# While the cache is down ----------------------------------------------------------

_local_guard = threading.Lock()
#: Per key: its lock and how many requests hold or wait for it.
_local: dict[str, tuple[threading.Lock, int]] = {}


class LocalLock:
    """A process-local lock per ``key``: while the cache is down, a file is
    rendered by one request of the process at a time, so a dead shared cache
    cannot turn a crawler's burst into as many renders on the database. A
    waiter gives up after ``CACHE_LOCK_WAIT`` seconds and renders anyway."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.held = False
        self.done = False
        with _local_guard:
            lock, users = _local.get(key, (threading.Lock(), 0))
            _local[key] = (lock, users + 1)
        self.lock = lock

    def take(self) -> bool:
        self.held = self.lock.acquire(timeout=conf.CACHE_LOCK_WAIT)
        return self.held

    def release(self) -> None:
        """Free the lock (once, whether it was taken or waited out)."""
        with _local_guard:
            if self.done:
                return
            self.done = True
            if self.held:
                self.held = False
                self.lock.release()
            lock, users = _local[self.key]
            if users <= 1:
                del _local[self.key]
            else:
                _local[self.key] = (lock, users - 1)
