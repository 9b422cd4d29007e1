"""Local-memory caches that record which of their methods were called, or
hold one of their own async methods at a gate.

Real ``LocMemCache``s (nothing mocked): the ASGI tests read ``calls`` to see
whether the views used the cache's async API (``aget_many``) or its sync one,
and cancel a request while an async call of a backend that has its own (as a
natively async backend does) is in flight.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

calls: list[str] = []


class RecordingLocMemCache(LocMemCache):
    def get_many(self, keys: Any, version: int | None = None) -> dict[str, Any]:
        calls.append("get_many")
        return super().get_many(keys, version=version)

    async def aget_many(self, keys: Any, version: int | None = None) -> dict[str, Any]:
        calls.append("aget_many")
        return await super().aget_many(keys, version=version)


class SyncRecordingLocMemCache(LocMemCache):
    """Records the sync reads; keeps Django's default async methods (each a
    sync call in the request's thread, ``aget_many`` one ``aget`` per key)."""

    inside_many = False

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        if not self.inside_many:  # LocMemCache.get_many calls get per key
            calls.append("get")
        return super().get(key, default, version=version)

    def get_many(self, keys: Any, version: int | None = None) -> dict[str, Any]:
        calls.append("get_many")
        self.inside_many = True
        try:
            return super().get_many(keys, version=version)
        finally:
            self.inside_many = False


class Gate:
    """Where ``GatedLocMemCache`` holds a call: ``method`` ("aadd" of the
    render lock, or the first "aget" after the lock was taken) waits,
    its work already done, until ``release()``."""

    def __init__(self) -> None:
        self.method: str | None = None
        self.locked = False
        self.reached = threading.Event()
        self.released = threading.Event()

    def hold(self, method: str) -> None:
        self.__init__()  # type: ignore[misc]
        self.method = method

    def release(self) -> None:
        self.released.set()

    async def pass_through(self, method: str) -> None:
        if method != self.method or self.reached.is_set():
            return
        self.reached.set()
        while not self.released.wait(0):
            await asyncio.sleep(0.005)


gate = Gate()


class GatedLocMemCache(LocMemCache):
    """``aadd`` and ``aget`` of its own, held at ``gate`` after their work."""

    async def aadd(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        added = self.add(key, value, timeout, version)
        if str(key).endswith(":lock"):
            gate.locked = added
            await gate.pass_through("aadd")
        return added

    async def aget(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        found = self.get(key, default, version)
        if gate.locked:
            await gate.pass_through("aget")
        return found


#: (method, "ok" or "failed") of each call of a ``CountingRedisCache``.
redis_calls: list[tuple[str, str]] = []


def _counted(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            result = getattr(RedisCache, name)(self, *args, **kwargs)
        except Exception:
            redis_calls.append((name, "failed"))
            raise
        redis_calls.append((name, "ok"))
        return result

    method.__name__ = name
    return method


class CountingRedisCache(RedisCache):
    """Django's ``RedisCache`` against a real server, recording in
    ``redis_calls`` each call the package makes and whether it failed."""


for _name in ("add", "get", "set", "touch", "delete", "get_many", "set_many", "incr"):
    setattr(CountingRedisCache, _name, _counted(_name))
