"""A cached file's entry: its metadata (``Entry``, stored as a dict) and
its gzip body in pieces of ``CHUNK_BYTES``, written by one render
(``Render``) and read back whole (``cached_body``). docs/caching.md.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import BaseCache
from django.utils import timezone

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.responses import (
    Gzip,
    Measured,
    Prepared,
    close_iterator,
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


class Render:
    """One render of a cold file into the cache.
    Iterating it renders the file: each step is the gzip output of a chunk
    of the body, and the compressed bytes go to the cache in pieces of
    ``CHUNK_BYTES`` as they fill. The metadata is stored only once the body
    has ended, so a render that fails midway leaves no entry: its pieces are
    keyed by this render alone and never read. ``entry`` is set at the end.
    """

    def __init__(
        self, cache: BaseCache, where: Lookup, prepared: Prepared, fingerprint: str | None
    ) -> None:
        self.cache = cache
        self.where = where
        self.prepared = prepared
        self.fingerprint = fingerprint
        self.render_id = new_token()
        self.timeout = entry_timeout(prepared.expires_at)
        self.storing = True
        self.entry: Entry | None = None

    def __iter__(self) -> Iterator[bytes]:
        body = self.prepared.body()
        measured = Measured(body)
        packer = Gzip()
        pending = bytearray()
        pieces = gzip_size = 0
        try:
            for chunk in measured:
                packed = packer.compress(chunk)
                gzip_size += len(packed)
                pending += packed
                while len(pending) >= CHUNK_BYTES:
                    self._store_piece(pieces, bytes(pending[:CHUNK_BYTES]))
                    del pending[:CHUNK_BYTES]
                    pieces += 1
                yield packed
            tail = packer.finish()
            gzip_size += len(tail)
            pending += tail
            yield tail
        finally:
            close_iterator(body)
        self.entry = self._finish(measured, gzip_size, pieces, bytes(pending))

    def _key(self, index: int) -> str:
        return f"{self.where.body_key}:{self.render_id}:{index}"

    def _store_piece(self, index: int, piece: bytes) -> None:
        if not self.storing:
            return
        try:
            quiet.call(self.cache, "set", self._key(index), piece, timeout=self.timeout)
        except quiet.CacheDown:
            self.storing = False

    def _finish(self, measured: Measured, gzip_size: int, pieces: int, last: bytes) -> Entry:
        etag = measured.hexdigest()[:32]
        # No lastmod (some URL has none): no Last-Modified, as without the
        # cache and in contrib; the ETag still answers conditional requests.
        lastmod = timestamp(self.prepared.lastmod)
        entry = self._entry(etag, lastmod, measured, gzip_size, pieces, last)
        chunks = entry.chunks
        if not self.storing:
            return entry
        try:
            rest = {self._key(pieces): last} if chunks > pieces else {}
            failed = quiet.call(self.cache, "set_many", rest, timeout=self.timeout) if rest else []
            if not failed:
                # The metadata last: a reader that finds it finds the chunks;
                # its stamp and ``expires`` tell when it is stale.
                quiet.call(
                    self.cache, "set", self.where.meta_key, asdict(entry), timeout=self.timeout
                )
            else:
                logger.warning(
                    "Sitemap cache refused %s chunks of %s", len(failed), self.where.body_key
                )
        except quiet.CacheDown:
            pass  # logged by the breaker when it opened
        return entry

    def _entry(
        self,
        etag: str,
        last_modified: int | None,
        measured: Measured,
        gzip_size: int,
        pieces: int,
        last: bytes,
    ) -> Entry:
        chunks = pieces + 1 if last or not pieces else pieces
        expires = None if self.timeout is None else time.time() + self.timeout
        return Entry(
            etag,
            last_modified,
            measured.size,
            gzip_size,
            chunks,
            self.fingerprint,
            self.where.stamp,
            expires,
            self.render_id,
            self.where.as_of,
        )

    def whole(self) -> tuple[Entry, bytes]:
        """Render to the end: the entry and the compressed body."""
        data = b"".join(self)
        assert self.entry is not None
        return self.entry, data


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
