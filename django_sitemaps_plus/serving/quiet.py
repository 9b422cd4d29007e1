"""Every cache call of the package, through one circuit breaker.

A sitemap never fails because of its cache: a cache that does not answer
(a server down, or frozen past its socket timeout) or raises costs a request
one failed call at most. The first failure opens the breaker, and for
``CACHE_BREAKER_SECONDS`` this process asks the cache nothing: every call
raises ``CacheDown`` at once, and the callers go on as if caching were off
(``quietly`` turns that into a fallback value). Once the window has passed,
one call is let through: when it succeeds the breaker closes, when it fails
it opens again for another window. The first failure and the recovery are
logged, not every call. docs/caching.md.

The breaker is per process (each process finds out on its own that the
cache is back) and reset when ``CACHES`` or ``SITEMAPS_PLUS`` change.
"""

from __future__ import annotations

import logging
import pickle
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import django_sitemaps_plus.conf as sitemaps_conf
from django_sitemaps_plus.conf import conf

if TYPE_CHECKING:
    from django.core.cache import BaseCache

logger = logging.getLogger("django_sitemaps_plus")

__all__ = [
    "CacheDown",
    "Guarded",
    "available",
    "call",
    "failed",
    "get_cache",
    "is_open",
    "quietly",
    "reset",
]

T = TypeVar("T")

#: Logged once when the cache fails (with the error), then not until it is back.
DOWN_MESSAGE = "Sitemap cache unavailable; rendering without it"
BACK_MESSAGE = "Sitemap cache available again"


#: What reading an entry raises when it was written by another version of
#: the package (a class it holds moved, was renamed or lost a field): the
#: entry is dropped and read as a miss, never taken for a cache failure (a
#: deploy would otherwise keep the cache "down" until old entries expire).
UNREADABLE = (pickle.UnpicklingError, ImportError, AttributeError, EOFError)
UNREADABLE_MESSAGE = "Sitemap cache entry %r written by another version of the package; dropped"

#: The breaker's clock.
_now = time.monotonic


class CacheDown(Exception):
    """The sitemap cache failed (``__cause__`` is its error), or failed
    within the breaker's window and was not asked."""


class _Breaker:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: ``_now()`` until which the cache is not asked; None: closed.
        self.open_until: float | None = None

    def allows(self) -> bool:
        """Whether a call may go to the cache: the breaker is closed, or its
        window has passed and this caller is the one let through to try."""
        until = self.open_until
        if until is None:
            return True
        now = _now()
        if now < until:
            return False
        with self.lock:
            if self.open_until is None:
                return True
            if now < self.open_until:
                return False
            # The one trial: the others keep away meanwhile.
            self.open_until = now + conf.CACHE_BREAKER_SECONDS
            return True

    def failed(self, error: BaseException) -> None:
        with self.lock:
            first = self.open_until is None
            self.open_until = _now() + conf.CACHE_BREAKER_SECONDS
        if first:
            logger.warning(DOWN_MESSAGE, exc_info=error)

    def succeeded(self) -> None:
        if self.open_until is None:
            return
        with self.lock:
            was_open, self.open_until = self.open_until is not None, None
        if was_open:
            logger.warning(BACK_MESSAGE)


_breaker = _Breaker()


def is_open() -> bool:
    """Whether this process keeps away from the cache now (it failed less
    than ``CACHE_BREAKER_SECONDS`` ago)."""
    until = _breaker.open_until
    return until is not None and _now() < until


def reset() -> None:
    """Close the breaker (settings changed; a test starts)."""
    with _breaker.lock:
        _breaker.open_until = None


def failed(error: BaseException) -> None:
    """Record a failure of the cache seen outside ``call`` (``get_cache()``
    raising): the breaker opens, and the first failure is logged."""
    if not isinstance(error, CacheDown):
        _breaker.failed(error)


def call(
    cache: BaseCache,
    method: str,
    *args: Any,
    passing: tuple[type[Exception], ...] = (),
    **kwargs: Any,
) -> Any:
    """``cache.<method>(*args, **kwargs)`` through the breaker; raises
    ``CacheDown`` when the cache fails, or failed within the window.
    ``passing``: errors the method raises as an answer, not as a failure
    (``incr`` of a missing key raises ``ValueError``), raised as they are."""
    if not _breaker.allows():
        raise CacheDown("the sitemap cache failed less than CACHE_BREAKER_SECONDS ago")
    try:
        try:
            result = getattr(cache, method)(*args, **kwargs)
        except UNREADABLE:
            if method not in ("get", "get_many"):
                raise
            result = _read_around(cache, method, *args, **kwargs)
    except Exception as error:
        if isinstance(error, passing):
            _breaker.succeeded()
            raise
        _breaker.failed(error)
        raise CacheDown(str(error)) from error
    _breaker.succeeded()
    return result


_MISSING = object()


def _read_around(cache: BaseCache, method: str, *args: Any, **kwargs: Any) -> Any:
    """``get`` or ``get_many`` of ``args`` with each entry that cannot be
    read (``UNREADABLE``) dropped and missing, read one key at a time."""
    keys = list(args[0]) if method == "get_many" else [args[0]]
    version = kwargs.get("version")
    found = {}
    for key in keys:
        try:
            value = cache.get(key, _MISSING, version=version)
        except UNREADABLE:
            logger.warning(UNREADABLE_MESSAGE, key)
            cache.delete(key, version=version)
            continue
        if value is not _MISSING:
            found[key] = value
    if method == "get_many":
        return found
    default = args[1] if len(args) > 1 else kwargs.get("default")
    return found.get(keys[0], default)


def get_cache() -> BaseCache:
    """The sitemap cache (``CACHE_ALIAS``); ``CacheDown`` when it cannot be
    made (the failure recorded as any other)."""
    try:
        return sitemaps_conf.get_cache()
    except Exception as error:
        _breaker.failed(error)
        raise CacheDown(str(error)) from error


def available() -> BaseCache | None:
    """The sitemap cache, or None while it is down (``get_cache``)."""
    try:
        return None if is_open() else get_cache()
    except CacheDown:
        return None


class Guarded:
    """``cache`` with each of its methods called through ``call``
    (``Guarded(cache).get(key)``), for code that makes many calls."""

    def __init__(self, cache: BaseCache) -> None:
        self.cache = cache

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return partial(call, self.cache, name)

    def incr(self, key: str, delta: int = 1) -> int:
        """``cache.incr``; a missing key's ``ValueError`` is an answer."""
        return int(call(self.cache, "incr", key, delta, passing=(ValueError,)))


def quietly(fallback: T, cache: BaseCache | None, method: str, *args: Any, **kwargs: Any) -> Any:
    """``call``, or ``fallback`` when the cache is down (or ``cache`` is None)."""
    if cache is None:
        return fallback
    try:
        return call(cache, method, *args, **kwargs)
    except CacheDown:
        return fallback
