"""A local-memory cache that records which of its methods were called.

A real ``LocMemCache`` (nothing mocked): the ASGI tests read ``calls`` to see
whether the views used the cache's async API (``aget_many``) or its sync one.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.locmem import LocMemCache

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
