"""Caches that record which of their methods were called.

Real ``LocMemCache``s (nothing mocked): the ASGI tests read ``calls`` to see
that the views read the cache as under WSGI (``get_many``, never the async
API's ``aget_many``); a real ``RedisCache`` counting its calls and failures.
"""

from __future__ import annotations

from typing import Any

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
