"""A cached file's entry: its metadata (``Entry``, stored as a dict) and
its gzip body in pieces of ``CHUNK_BYTES``, written by one render
(``render``) and read back whole (``cached_body``). docs/caching.md.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import BaseCache
from django.utils import timezone

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.responses import (
    Measured,
    Prepared,
    close_iterator,
    gzip_chunks,
    timestamp,
)
from django_sitemaps_plus.serving.versions import KEY_PREFIX, new_token

if TYPE_CHECKING:
    from django_sitemaps_plus.serving.cache import Lookup

logger = logging.getLogger("django_sitemaps_plus")

#: Largest cached chunk: below Memcached's default 1 MB item size.
CHUNK_BYTES = 512 * 1024


def body_key(meta_key: str, stamp: str) -> str:
    return f"{KEY_PREFIX}:b:{meta_key.rsplit(':', 1)[1]}:{stamp}"


@dataclass
class Entry:
    """What the cache holds for one file (the body is stored beside it)."""

    etag: str
    last_modified: int | None
    size: int
    gzip_size: int
    chunks: int
    fingerprint: str | None = None
    stamp: str = ""
    #: Seconds since the epoch after which the entry is stale (None: never).
    expires: float | None = None
    #: The render that stored the chunks (part of their keys).
    render: str = ""
    #: ``time.time()`` when the version tokens it was rendered under were
    #: read, before any of its rows: it shows every change made earlier.
    as_of: float | None = None

    def is_current(self, stamp: str) -> bool:
        """Of this version of the sections, and not past its maximum age."""
        return self.stamp == stamp and not self.expired()

    def expired(self) -> bool:
        """Past its maximum age (``CACHE_TIMEOUT``, a news window's end)."""
        return self.expires is not None and self.expires <= time.time()

    def may_stand_in(self) -> bool:
        """Whether it may be served, out of date, while another process
        renders the current version: every change it does not show was
        made after ``as_of``, less than ``CACHE_STALE_SECONDS`` ago
        (docs/caching.md says why not from the change itself)."""
        bound = conf.CACHE_STALE_SECONDS
        return (
            bound > 0
            and self.as_of is not None
            and time.time() - self.as_of <= bound
            and not self.expired()
        )

    @classmethod
    def from_cache(cls, value: Any) -> Entry | None:
        if not isinstance(value, dict):
            return None
        try:
            return cls(**value)
        except TypeError:
            return None


def entry_timeout(expires_at: dt.datetime | None) -> int | None:
    """Seconds the entry may live: the maximum age, capped at the content's expiry."""
    timeout = conf.CACHE_TIMEOUT
    if expires_at is not None:
        remaining = math.ceil((expires_at - timezone.now()).total_seconds())
        remaining = max(1, remaining)
        timeout = remaining if timeout is None else min(timeout, remaining)
    return timeout


def render(
    cache: BaseCache, where: Lookup, prepared: Prepared, fingerprint: str | None
) -> tuple[Entry, bytes]:
    """Render a cold file into the cache: its entry and its gzip body. The
    body goes to the cache in pieces of ``CHUNK_BYTES`` keyed by this render
    alone, the metadata last, so a render that fails midway (or a piece the
    cache refuses) leaves no entry that a reader could take."""
    body = prepared.body()
    measured = Measured(body)
    try:
        data = b"".join(gzip_chunks(measured))
    finally:
        close_iterator(body)
    render_id = new_token()
    timeout = entry_timeout(prepared.expires_at)
    chunks = max(1, math.ceil(len(data) / CHUNK_BYTES))
    entry = Entry(
        measured.hexdigest()[:32],
        # No lastmod (some URL has none): no Last-Modified, as without the
        # cache and in contrib; the ETag still answers conditional requests.
        timestamp(prepared.lastmod),
        measured.size,
        len(data),
        chunks,
        fingerprint,
        where.stamp,
        None if timeout is None else time.time() + timeout,
        render_id,
        where.as_of,
    )
    keys = [f"{where.body_key}:{render_id}:{index}" for index in range(chunks)]
    try:
        for index, key in enumerate(keys[:-1]):
            piece = data[index * CHUNK_BYTES : (index + 1) * CHUNK_BYTES]
            quiet.call(cache, "set", key, piece, timeout=timeout)
        last = {keys[-1]: data[(chunks - 1) * CHUNK_BYTES :]}
        if failed := quiet.call(cache, "set_many", last, timeout=timeout):
            logger.warning("Sitemap cache refused %s chunks of %s", len(failed), where.body_key)
        else:
            quiet.call(cache, "set", where.meta_key, asdict(entry), timeout=timeout)
    except quiet.CacheDown:
        pass  # logged by the breaker when it opened
    return entry, data


def chunk_keys(meta_key: str, entry: Entry) -> list[str]:
    """The keys of the body of the file ``meta_key``'s version ``entry``."""
    body = body_key(meta_key, entry.stamp)
    prefix = f"{body}:{entry.render}" if entry.render else body
    return [f"{prefix}:{i}" for i in range(entry.chunks)]


def _joined(keys: list[str], found: dict[str, Any]) -> bytes | None:
    if len(found) != len(keys):
        return None  # evicted in part: render again
    return b"".join(found[k] for k in keys)


def cached_body(
    cache: BaseCache, meta_key: str, entry: Entry, prefetched: dict[str, Any] | None = None
) -> bytes | None:
    keys = chunk_keys(meta_key, entry)
    if prefetched is not None:
        return _joined(keys, prefetched)
    return _joined(keys, quiet.call(cache, "get_many", keys))
