"""Cached serving: every sitemap file rendered at most once per change.

A file's metadata key hashes the site (scheme and host) and the request
path; its entry records the *stamp* it was rendered under: the version
tokens of the sections it shows (``versions``), or for a model section's
file its settings, key range and the tokens of the blocks in that range
(``BlockScope``). A cold file is rendered into the cache (``entries``,
gzip and responses: ``responses``) and answered from the stored entry like
a hit. docs/caching.md.

- **One sync flow.** ``serve`` calls the cache directly (through ``quiet``),
  in the view's thread: the request's own under WSGI, the thread Django runs
  a sync view in under ASGI. Only a streamed body is sent through an async
  iterator under ASGI (``streaming_response``).
- **Warm costs no query.** One ``get_many`` reads the tokens and the
  metadata; a conditional request that matches is answered from them alone
  (a 304), a full one fetches the chunks in a second round trip.
- **One render per file at a time.** The first request takes the file's
  render lock (``locks.Lock``: ``cache.add``, one per file across versions,
  per version without stale serving; expiring after ``CACHE_LOCK_TIMEOUT``
  seconds, so a holder that dies frees it). Meanwhile the others serve the
  version the cache holds when it is out of date by at most
  ``CACHE_STALE_SECONDS`` (``Entry.may_stand_in``: stale while another
  process refreshes), else wait up to ``CACHE_LOCK_WAIT`` seconds for the
  holder's result, then render themselves rather than fail.
- **A cache that is down** never breaks a sitemap: every cache call goes
  through one circuit breaker (``quiet``), so a request fails one call at
  most and the process then leaves the cache alone for a few seconds; the
  file is rendered as if caching were off, one request of the process at a
  time (``_uncached``, ``locks.LocalLock``).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from django.core.cache import BaseCache
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.cache import get_conditional_response

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving import entries, locks, quiet
from django_sitemaps_plus.serving.responses import (
    Prepared,
    accepts_gzip,
    close_iterator,
    finish,
    gunzip_chunks,
    respond_uncached,
    streaming_response,
    timestamp,
)
from django_sitemaps_plus.serving.versions import (
    ALL,
    KEY_PREFIX,
    files_token,
    range_tokens,
    version_key,
    versions_of,
)

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")

__all__ = ["Prepared", "Source", "serve"]

#: A cached file up to this size is sent to a client without gzip as a plain
#: ``HttpResponse`` (decompressed whole); larger ones are streamed.
IN_MEMORY_BYTES = 1024 * 1024


@dataclass
class Source:
    """One sitemap file as the views describe it to the cache."""

    #: The sections whose content the file shows (its invalidation scope).
    sections: Sequence[Section]
    content_type: str
    prepare: Callable[[], Prepared]
    #: A cheap summary of the file's content (URL count, lastmod), compared
    #: on every hit when ``CACHE_FRESHNESS_CHECK`` is on.
    fingerprint: Callable[[], object] | None = None
    #: A model section's file: keyed by the blocks it holds, not by its
    #: section's token (``BlockScope``).
    scope: BlockScope | None = None


@dataclass(frozen=True)
class BlockScope:
    """What a model section's file is keyed by besides the site and path:
    the section's settings (``signature``), its key range in the kept
    layout, and the tokens of the blocks that range covers."""

    section: str
    width: int
    #: A hash of ``fingerprints.signature``: a changed setting makes every file cold.
    signature: str
    #: The cache key of the kept layout's file key ranges.
    layout_key: str
    #: The file's key range in the kept ranges, or None (none kept, no such file).
    span_of: Callable[[Any], tuple[int | None, int] | None]
    #: The file's key range from a layout computed now (queries), or None.
    compute: Callable[[], tuple[int | None, int] | None]


@dataclass
class Lookup:
    """Where one file's current version lives in the cache, and what was found."""

    meta_key: str  # the file's metadata, across versions
    stamp: str  # the version tokens of the file's sections, hashed
    held: entries.Entry | None  # the metadata found, of whatever version
    #: ``time.time()`` before the version tokens were read.
    as_of: float
    #: The held entry's chunks, read with the block tokens (a scoped file)...
    prefetched: dict[str, Any] | None = None
    #: ...as the answer to the request that ``held`` gives said.
    answer: _Answer | None = None

    @property
    def body_key(self) -> str:
        """The prefix of this version's chunks."""
        return entries.body_key(self.meta_key, self.stamp)

    @property
    def lock_key(self) -> str:
        """The key of the file's render lock. While a previous version may
        stand in (``CACHE_STALE_SECONDS``), one for all the file's versions:
        a file changing faster than it renders is rendered by one process at
        a time, the others serve what the cache holds. Without, one per
        version, as before: a waiter is served only the version it asked for."""
        key = self.meta_key if conf.CACHE_STALE_SECONDS > 0 else self.body_key
        return f"{key}:lock"


def _lookup_keys(site: SiteContext, request: HttpRequest, source: Source) -> tuple[str, list[str]]:
    """The file's metadata key and the names of the sections it shows."""
    # Scheme and host are part of the key: a request for another Host never
    # reads (or poisons) this site's files.
    where = f"{site.cache_key}\n{request.path}\n{source.content_type}\n"
    file_id = hashlib.sha256(where.encode()).hexdigest()[:32]
    if source.scope is not None:
        return f"{KEY_PREFIX}:f:{file_id}", [ALL, files_token(source.scope.section)]
    return f"{KEY_PREFIX}:f:{file_id}", [ALL, *sorted(s.get_name() for s in source.sections)]


def _lookup_of(
    meta_key: str,
    names: list[str],
    versions: list[str],
    meta: Any,
    as_of: float,
    extra: str = "",
) -> Lookup:
    stamp_text = "\n".join([*(f"{n}={v}" for n, v in zip(names, versions)), extra])
    stamp = hashlib.sha256(stamp_text.encode()).hexdigest()[:32]
    return Lookup(meta_key, stamp, entries.Entry.from_cache(meta), as_of)


def _lookup(cache: BaseCache, site: SiteContext, request: HttpRequest, source: Source) -> Lookup:
    """Version tokens and the file's metadata, in one round trip when warm
    (a scoped file: two, the second with its body)."""
    meta_key, names = _lookup_keys(site, request, source)
    scope = source.scope
    keys = [*(version_key(n) for n in names), meta_key]
    as_of = time.time()
    found: dict[str, Any] = quiet.call(
        cache, "get_many", keys if scope is None else [*keys, scope.layout_key]
    )
    versions = versions_of(cache, names, found)
    if scope is None:
        return _lookup_of(meta_key, names, versions, found.get(meta_key), as_of)
    return _scoped_lookup(cache, request, scope, meta_key, names, versions, found, as_of)


def _scoped_lookup(
    cache: BaseCache,
    request: HttpRequest,
    scope: BlockScope,
    meta_key: str,
    names: list[str],
    versions: list[str],
    found: dict[str, Any],
    as_of: float,
) -> Lookup:
    """A model section file's lookup, after the first round trip: its key
    range from the kept layout (computed when none is kept), then its
    blocks' tokens read together with the body of the entry the first trip
    found (when the request needs it): a warm file costs two round trips,
    as an unscoped one does, and a 304 one more than an unscoped one (the
    first request after a change reads the old body: served while another
    process renders the new one, else dropped)."""
    span = scope.span_of(found.get(scope.layout_key))
    if span is None:
        span = scope.compute()
    blocks = [] if span is None else range_tokens(scope.section, scope.width, *span)
    held = entries.Entry.from_cache(found.get(meta_key))
    answer = None if held is None else _answer(request, held)
    chunk_keys: list[str] = []
    if held is not None and answer is not None and answer.needs_body:
        chunk_keys = entries.chunk_keys(meta_key, held)
    read: dict[str, Any] = quiet.call(
        cache, "get_many", [*(version_key(n) for n in blocks), *chunk_keys]
    )
    block_versions = versions_of(cache, blocks, read)
    where = _lookup_of(
        meta_key,
        [*names, *blocks],
        [*versions, *block_versions],
        found.get(meta_key),
        as_of,
        f"{scope.signature}\n{span}",
    )
    where.answer = answer
    if chunk_keys:
        where.prefetched = {key: read[key] for key in chunk_keys if key in read}
    return where


# Responses -----------------------------------------------------------------


@dataclass
class _Answer:
    """How a request is answered from a cached entry (decided once)."""

    etag: str
    gzip: bool
    #: The 304 (or 412) the conditional headers call for, else None.
    not_modified: HttpResponseBase | None
    head: bool

    @property
    def needs_body(self) -> bool:
        """Whether the response sends the stored body (not a 304, not HEAD)."""
        return self.not_modified is None and not self.head


def _answer(request: HttpRequest, entry: entries.Entry) -> _Answer:
    gzip = conf.GZIP and accepts_gzip(request)
    # Strong ETags differ per content coding (RFC 9110 §8.8.3).
    etag = f'"{entry.etag}-gz"' if gzip else f'"{entry.etag}"'
    not_modified = get_conditional_response(request, etag=etag, last_modified=entry.last_modified)
    return _Answer(etag, gzip, not_modified, request.method == "HEAD")


def _entry_response(
    request: HttpRequest, entry: entries.Entry, content_type: str, answer: _Answer, data: bytes
) -> HttpResponseBase:
    """The response for a cached entry (``data``: its body, when ``answer`` needs it)."""
    response: HttpResponseBase
    gzip = answer.gzip
    if answer.not_modified is not None:
        response = answer.not_modified
    elif answer.head:
        response = HttpResponse(content_type=content_type)
        response["Content-Length"] = str(entry.gzip_size if gzip else entry.size)
        if gzip:
            response["Content-Encoding"] = "gzip"
    elif gzip:
        response = HttpResponse(data, content_type=content_type)
        response["Content-Encoding"] = "gzip"
        response["Content-Length"] = str(len(data))
    elif entry.size <= IN_MEMORY_BYTES:
        # Small enough to hold: a plain response, whose ``.content`` a
        # test (``self.client.get(...).content``) can read, as with contrib.
        response = HttpResponse(b"".join(gunzip_chunks(data)), content_type=content_type)
        response["Content-Length"] = str(entry.size)
    else:
        # Decompressed as it is sent: memory follows the compressed size.
        response = streaming_response(request, gunzip_chunks(data), content_type)
        response["Content-Length"] = str(entry.size)
    response["ETag"] = answer.etag
    if conf.GZIP:
        response["Vary"] = "Accept-Encoding"
    return finish(response, entry.last_modified)


def _fingerprint(source: Source) -> str | None:
    if not conf.CACHE_FRESHNESS_CHECK or source.fingerprint is None:
        return None
    return hashlib.sha256(repr(source.fingerprint()).encode()).hexdigest()[:32]


def _uncached(
    request: HttpRequest, site: SiteContext, source: Source, error: Exception
) -> HttpResponseBase:
    """The file rendered without the cache, which failed (``error``, now or
    within the breaker's window): under a process-local lock of the file
    (its site and path), held until its body has been sent (under ASGI:
    rendered), so a dead shared cache does not turn a burst of requests into
    as many renders at once."""
    quiet.failed(error)
    lock = locks.LocalLock(f"{site.cache_key}\n{request.path}")
    sending: list[_Releasing] = []

    def body() -> Iterator[bytes]:
        if isinstance(request, ASGIRequest):
            # Under ASGI, Django drops the response of a client that left while
            # the view ran without closing it: nothing would free the lock. The
            # body is rendered here, whole, and the lock freed when it is.
            return iter(list(prepared.body()))
        sending.append(_Releasing(prepared.body(), lock.release))
        return sending[0]

    try:
        lock.take()
        prepared = source.prepare()
        return respond_uncached(request, replace(prepared, body=body), source.content_type)
    finally:
        if not sending:
            lock.release()  # a 304, a HEAD, a 404: no body to wait for


class _Releasing:
    """``chunks``, then ``release()`` once they have ended or are closed."""

    def __init__(self, chunks: Iterator[bytes], release: Callable[[], None]) -> None:
        self.chunks = chunks
        self.release: Callable[[], None] | None = release

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self.chunks)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        release, self.release = self.release, None
        try:
            close_iterator(self.chunks)
        finally:
            if release is not None:
                release()


def serve(request: HttpRequest, site: SiteContext, source: Source) -> HttpResponseBase:
    """Answer ``request`` for ``source`` from the cache, rendering on a miss."""
    try:
        cache = quiet.get_cache()
        where = _lookup(cache, site, request, source)
    except Exception as error:
        return _uncached(request, site, source, error)

    fingerprint = _fingerprint(source)
    held = where.held
    current = _is_current(held, where, fingerprint)
    lock = locks.Lock(cache, where.lock_key, conf.CACHE_LOCK_TIMEOUT)
    locked = False
    try:
        try:
            if current and (hit := _held_response(request, source, cache, where)) is not None:
                return hit
            # A miss. The render lock comes before any query: while one
            # request renders, the others serve the version held (when recent
            # enough) or wait for the new one, and cost the database nothing
            # (a stampede of cold requests is one render's queries).
            locked = lock.take()
            response = None
            if locked:
                # The lock may be free because a holder just stored the file
                # and released it after this request's lookup missed.
                response = _stored(request, source, cache, where, fingerprint)
            elif not current and held is not None and held.may_stand_in():
                # Stale while another process refreshes: at once, no query.
                response = _held_response(request, source, cache, where)
            if response is None and not locked:
                locked, response = _wait_for_entry(request, source, lock, where, fingerprint)
        except quiet.CacheDown as error:
            return _uncached(request, site, source, error)
        # Rendered here when this request holds the lock (the holder gave up:
        # a 404, an error), or waited CACHE_LOCK_WAIT for a slow holder.
        if response is not None:
            return response
        # The previous version's body, read to stand in while another process
        # renders: not held through this request's own render (a file's size).
        where.prefetched = None
        return _render(request, source, cache, where, fingerprint, locked)
    finally:
        # Every exit: a stored file, a 404, an error, a render that failed.
        if locked:
            lock.release()


def _held_response(
    request: HttpRequest, source: Source, cache: BaseCache, where: Lookup
) -> HttpResponseBase | None:
    """The response from the entry the lookup found (current, or standing
    in for it): its own ETag, Last-Modified and body, so a 304 confirms
    the version sent. None when its body is gone (evicted)."""
    held = where.held
    assert held is not None
    answer = where.answer or _answer(request, held)
    data = (
        entries.cached_body(cache, where.meta_key, held, where.prefetched)
        if answer.needs_body
        else b""
    )
    if data is None:
        return None
    return _entry_response(request, held, source.content_type, answer, data)


def _render(
    request: HttpRequest,
    source: Source,
    cache: BaseCache,
    where: Lookup,
    fingerprint: str | None,
    locked: bool,
) -> HttpResponseBase:
    """Render the file into the cache and answer from the stored entry, as
    a hit is answered; a HEAD or a matching If-Modified-Since needs no
    render (the cheap queries tell). ``locked``: whether this request holds
    the render lock (the caller releases it once this has returned)."""
    prepared = source.prepare()
    if request.method == "HEAD" or (
        "HTTP_IF_MODIFIED_SINCE" in request.META and "HTTP_IF_NONE_MATCH" not in request.META
    ):
        last_modified = timestamp(prepared.lastmod)
        if request.method == "HEAD" or (
            last_modified is not None
            and get_conditional_response(request, last_modified=last_modified) is not None
        ):
            return respond_uncached(request, prepared, source.content_type)
    if not locked and not quiet.is_open():
        logger.warning(
            "Sitemap cache: another process holds the render lock of %s for over %ss; "
            "rendering here too.",
            request.path,
            conf.CACHE_LOCK_WAIT,
        )
    entry, data = entries.render(cache, where, prepared, fingerprint)
    return _entry_response(request, entry, source.content_type, _answer(request, entry), data)


def _is_current(entry: entries.Entry | None, where: Lookup, fingerprint: str | None) -> bool:
    return entry is not None and entry.is_current(where.stamp) and entry.fingerprint == fingerprint


def _stored(
    request: HttpRequest,
    source: Source,
    cache: BaseCache,
    where: Lookup,
    fingerprint: str | None,
    *,
    stand_in: bool = False,
) -> HttpResponseBase | None:
    """The response from the file's entry as the cache holds it now, when
    current (or, ``stand_in``, recent enough to stand in for the current one)."""
    entry = entries.Entry.from_cache(quiet.call(cache, "get", where.meta_key))
    if entry is None or not (
        _is_current(entry, where, fingerprint) or (stand_in and entry.may_stand_in())
    ):
        return None
    return _held_response(
        request, source, cache, replace(where, held=entry, answer=None, prefetched=None)
    )


def _wait_for_entry(
    request: HttpRequest, source: Source, lock: locks.Lock, where: Lookup, fingerprint: str | None
) -> tuple[bool, HttpResponseBase | None]:
    """Poll for the entry another request is rendering (the holder stores
    the metadata before it releases the lock), and take the lock when the
    holder gives up (``Lock.wait_or_take``): whether this request took it,
    and the response from the entry found. The holder's entry, made from
    rows read after this request's lookup, is recent enough to serve even
    when a save made it out of date meanwhile, unless ``CACHE_STALE_SECONDS``
    is 0."""
    ready = partial(_stored, request, source, lock.cache, where, fingerprint, stand_in=True)
    return lock.wait_or_take(ready)
