"""Cached serving: every sitemap file rendered at most once per change.

How it works (docs/caching.md):

- **Version keys.** Each section has a version token in the cache
  (``sitemaps_plus:v:<section>``), and so do all sections together
  (``sitemaps_plus:v:*``). A file's metadata key hashes the site (scheme and
  host) and the request path; the metadata records the *stamp* (a hash of the
  tokens of the sections the file shows: a section file its section, the index
  and ``sitemap.txt`` all of them) it was rendered under, and the body chunks
  are keyed by that stamp. ``invalidate()`` replaces tokens, so every process
  sharing the cache stops using the old entries at once; nothing is ever
  deleted or cleared.
- **Stored compressed.** A file is rendered once, gzip-compressed while it
  streams, and stored in chunks of at most ``CHUNK_BYTES`` (Memcached's item
  limit is 1 MB) with a small metadata entry: strong ETag (SHA-256 of the
  uncompressed bytes), Last-Modified, sizes. Clients that accept gzip get the
  stored bytes; others get them decompressed on the fly.
- **Warm costs no query.** One ``get_many`` reads the tokens and the
  metadata; a conditional request that matches is answered from them alone
  (a 304), a full one fetches the chunks in a second round trip.
- **One render per cold file.** The first request takes a lock with
  ``cache.add`` (expiring after ``CACHE_LOCK_TIMEOUT`` seconds, so a holder
  that dies frees it); other requests wait up to ``CACHE_LOCK_WAIT`` seconds
  for its result, then render themselves rather than fail.
- **A cache that is down** never breaks a sitemap: every cache error is
  logged and the file is rendered as if caching were off.
"""

from __future__ import annotations

import asyncio
import calendar
import datetime as dt
import hashlib
import logging
import math
import re
import time
import uuid
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from django.core.cache import BaseCache, caches
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils import timezone
from django.utils.cache import get_conditional_response
from django.utils.http import http_date

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.signals import sitemaps_invalidated

if TYPE_CHECKING:
    from django_sitemaps_plus.location import SiteContext
    from django_sitemaps_plus.sections import Section

logger = logging.getLogger("django_sitemaps_plus")

__all__ = ["Prepared", "Source", "invalidate", "serve"]

KEY_PREFIX = "sitemaps_plus"
#: The version token shared by all sections (``invalidate()`` with no argument).
ALL = "*"
#: Largest cached chunk: below Memcached's default 1 MB item size.
CHUNK_BYTES = 512 * 1024
#: Seconds a file's metadata is kept at least (it remembers when unchanged
#: content was first seen, for Last-Modified).
META_TIMEOUT = 7 * 24 * 3600
#: gzip level of cached and built files: 6 is zlib's default, within a few
#: percent of 9's size at half its time.
GZIP_LEVEL = 6
_POLL_SECONDS = (0.02, 0.05, 0.1, 0.2)
#: A cached file up to this size is sent to a client without gzip as a plain
#: ``HttpResponse`` (decompressed whole); larger ones are streamed.
IN_MEMORY_BYTES = 1024 * 1024
#: Seconds ``remember()`` keeps a value its sections' versions still match.
REMEMBER_TIMEOUT = 3600

T = TypeVar("T")

LastmodValue = dt.date | dt.datetime | None


@dataclass
class Prepared:
    """A file ready to render: its lastmod and a callable producing its bytes.

    ``prepare()`` of a ``Source`` runs the cheap queries (which pages exist,
    their lastmod) and raises ``Http404`` for a missing file; ``body()`` runs
    the row queries.
    """

    lastmod: LastmodValue
    body: Callable[[], Iterator[bytes]]
    #: When the content next changes by time alone (news window), else None.
    expires_at: dt.datetime | None = None


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


def get_cache() -> BaseCache:
    """The cache named by ``SITEMAPS_PLUS["CACHE_ALIAS"]``."""
    return caches[conf.CACHE_ALIAS]


def _version_key(name: str) -> str:
    return f"{KEY_PREFIX}:v:{name}"


def _new_token() -> str:
    return uuid.uuid4().hex[:16]


def _section_names(section: str | Section | Iterable[str | Section] | None) -> list[str]:
    from django_sitemaps_plus.sections import Section

    if section is None:
        return [ALL]
    if isinstance(section, str | Section):
        section = [section]
    return sorted({s.get_name() if isinstance(s, Section) else str(s) for s in section})


def invalidate(section: str | Section | Iterable[str | Section] | None = None) -> None:
    """Make every cached file showing ``section`` stale, in every process.

    ``section`` is a section name, a ``Section``, several of them, or None
    for all sections (then every cached sitemap file of every site is stale).
    Use it after writes that send no model signals: ``QuerySet.update()``,
    ``bulk_create()``, raw SQL, another service writing the tables. Errors of
    the cache are logged, never raised.
    """
    names = bump(section)
    sitemaps_invalidated.send(sender=None, sections=None if names == [ALL] else names)


def bump(section: str | Section | Iterable[str | Section] | None = None) -> list[str]:
    """``invalidate()`` without the signal: replace the version tokens.

    For the at-once invalidation of a save inside a transaction, whose signal
    is sent by the one after the commit. Returns the names it bumped.
    """
    names = _section_names(section)
    try:
        get_cache().set_many({_version_key(name): _new_token() for name in names}, timeout=None)
    except Exception:
        logger.warning("Sitemap cache: could not invalidate %s", names, exc_info=True)
    return names


def _versions(cache: BaseCache, names: Sequence[str], found: dict[str, Any]) -> list[str]:
    """The current token of each name (from ``found``), creating missing ones."""
    tokens = []
    for name in names:
        key = _version_key(name)
        token = found.get(key)
        if token is None:
            token = _new_token()
            # add(): two processes creating the same token agree on the winner's.
            if not cache.add(key, token, timeout=None):
                token = cache.get(key) or token
        tokens.append(str(token))
    return tokens


async def _aversions(cache: BaseCache, names: Sequence[str], found: dict[str, Any]) -> list[str]:
    """``_versions`` through the cache's async API."""
    tokens = []
    for name in names:
        key = _version_key(name)
        token = found.get(key)
        if token is None:
            token = _new_token()
            if not await cache.aadd(key, token, timeout=None):
                token = await cache.aget(key) or token
        tokens.append(str(token))
    return tokens


@dataclass
class Lookup:
    """Where one file's current version lives in the cache, and what was found."""

    meta_key: str  # the file's metadata, across versions
    body_key: str  # prefix of this version's chunks and lock
    stamp: str  # the version tokens of the file's sections, hashed
    entry: Entry | None  # the metadata, when it is of this version
    previous: Entry | None  # the metadata of an older version

    @property
    def lock_key(self) -> str:
        """The key of this version's render lock."""
        return f"{self.body_key}:lock"


def _lookup_keys(site: SiteContext, request: HttpRequest, source: Source) -> tuple[str, list[str]]:
    """The file's metadata key and the names of the sections it shows."""
    # Scheme and host are part of the key: a request for another Host never
    # reads (or poisons) this site's files.
    where = f"{site.cache_key}\n{request.path}\n{source.content_type}\n"
    file_id = hashlib.sha256(where.encode()).hexdigest()[:32]
    return f"{KEY_PREFIX}:f:{file_id}", [ALL, *sorted(s.get_name() for s in source.sections)]


def _lookup_of(meta_key: str, names: list[str], versions: list[str], meta: Any) -> Lookup:
    stamp_text = "\n".join(f"{n}={v}" for n, v in zip(names, versions))
    stamp = hashlib.sha256(stamp_text.encode()).hexdigest()[:32]
    entry = Entry.from_cache(meta)
    current = entry if entry is not None and entry.is_current(stamp) else None
    file_id = meta_key.rsplit(":", 1)[1]
    return Lookup(meta_key, f"{KEY_PREFIX}:b:{file_id}:{stamp}", stamp, current, entry)


def _lookup(cache: BaseCache, site: SiteContext, request: HttpRequest, source: Source) -> Lookup:
    """Version tokens and the file's metadata, in one round trip when warm."""
    meta_key, names = _lookup_keys(site, request, source)
    found: dict[str, Any] = cache.get_many([*(_version_key(n) for n in names), meta_key])
    versions = _versions(cache, names, found)
    return _lookup_of(meta_key, names, versions, found.get(meta_key))


async def _alookup(
    cache: BaseCache, site: SiteContext, request: HttpRequest, source: Source
) -> Lookup:
    """``_lookup`` through the cache's async API."""
    meta_key, names = _lookup_keys(site, request, source)
    found: dict[str, Any] = await cache.aget_many([*(_version_key(n) for n in names), meta_key])
    versions = await _aversions(cache, names, found)
    return _lookup_of(meta_key, names, versions, found.get(meta_key))


def remember(
    site: SiteContext,
    sections: Sequence[Section],
    what: str,
    compute: Callable[[], T],
    timeout: int = REMEMBER_TIMEOUT,
) -> T:
    """``compute()``, kept in the cache until any of ``sections`` changes.

    For figures derived from the sections' rows that are costly on a large
    site and asked for often (the admin overview's files and lastmod counts):
    keyed by the site, ``what`` and the sections' version tokens, so a save
    or ``invalidate()`` makes them stale at once, as it does the files;
    ``timeout`` bounds what the clock alone changes (a news window). With
    ``CACHE`` off, or the cache down, it is ``compute()``.
    """
    if not conf.CACHE:
        return compute()
    try:
        cache = get_cache()
        names = [ALL, *sorted(s.get_name() for s in sections)]
        found: dict[str, Any] = cache.get_many([_version_key(n) for n in names])
        versions = _versions(cache, names, found)
        stamp = "\n".join([site.cache_key, what, *(f"{n}={v}" for n, v in zip(names, versions))])
        key = f"{KEY_PREFIX}:r:{hashlib.sha256(stamp.encode()).hexdigest()[:40]}"
        held = cache.get(key)
    except Exception:
        logger.warning("Sitemap cache unavailable; computing %s without it", what, exc_info=True)
        return compute()
    if isinstance(held, tuple) and len(held) == 1:
        return cast(T, held[0])
    value = compute()
    try:
        # Wrapped: a computed None is remembered too.
        cache.set(key, (value,), timeout=timeout)
    except Exception:
        logger.warning("Sitemap cache: could not store %s", what, exc_info=True)
    return value


# Rendering into the cache ------------------------------------------------------


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

    def is_current(self, stamp: str) -> bool:
        """Of this version of the sections, and not past its maximum age."""
        return self.stamp == stamp and (self.expires is None or self.expires > time.time())

    @classmethod
    def from_cache(cls, value: Any) -> Entry | None:
        if not isinstance(value, dict):
            return None
        try:
            return cls(**value)
        except TypeError:
            return None


def timestamp(value: LastmodValue) -> int | None:
    """Seconds since the epoch of a lastmod (a date counts as midnight UTC)."""
    if value is None:
        return None
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return calendar.timegm(value.utctimetuple())


class Measured:
    """Chunks passed through as they are, hashed (SHA-256) and counted on the way.

    Also used by ``build``: a file's ETag here and its manifest hash there are
    the same SHA-256.
    """

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.chunks = chunks
        self.digest = hashlib.sha256()
        self.size = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.digest.update(chunk)
            self.size += len(chunk)
            yield chunk

    def hexdigest(self) -> str:
        return self.digest.hexdigest()


def gzip_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """gzip ``chunks`` as they stream, at ``GZIP_LEVEL`` (also used by ``build``)."""
    # wbits=31: a gzip container with mtime 0, so equal content gives equal bytes.
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
    for chunk in chunks:
        if out := compressor.compress(chunk):
            yield out
    yield compressor.flush()


def compress(chunks: Iterable[bytes]) -> tuple[bytes, str, int]:
    """gzip bytes, SHA-256 hex of the uncompressed bytes, uncompressed size."""
    measured = Measured(chunks)
    data = b"".join(gzip_chunks(measured))
    return data, measured.hexdigest(), measured.size


def _timeout(expires_at: dt.datetime | None) -> int | None:
    """Seconds the entry may live: the maximum age, capped at the content's expiry."""
    timeout = conf.CACHE_TIMEOUT
    if expires_at is not None:
        remaining = math.ceil((expires_at - timezone.now()).total_seconds())
        remaining = max(1, remaining)
        timeout = remaining if timeout is None else min(timeout, remaining)
    return timeout


def _render_and_store(
    cache: BaseCache, where: Lookup, prepared: Prepared, fingerprint: str | None
) -> tuple[Entry, bytes]:
    data, digest, size = compress(prepared.body())
    etag = digest[:32]
    last_modified = timestamp(prepared.lastmod)
    if last_modified is None:
        # No lastmod: Last-Modified is when this exact content was first seen
        # (kept across invalidations that re-render the same bytes).
        before = where.previous
        if before is not None and before.etag == etag and before.last_modified is not None:
            last_modified = before.last_modified
        else:
            last_modified = int(time.time())
    pieces = [data[i : i + CHUNK_BYTES] for i in range(0, len(data), CHUNK_BYTES)] or [b""]
    timeout = _timeout(prepared.expires_at)
    expires = None if timeout is None else time.time() + timeout
    entry = Entry(
        etag, last_modified, size, len(data), len(pieces), fingerprint, where.stamp, expires
    )
    try:
        values: dict[str, Any] = {f"{where.body_key}:{i}": p for i, p in enumerate(pieces)}
        failed = cache.set_many(values, timeout=timeout)
        if not failed:
            # The metadata last: a reader that finds it finds the chunks. It
            # outlives the chunks so the next render can keep Last-Modified for
            # unchanged content; its stamp and ``expires`` tell when it is stale.
            meta_timeout = None if timeout is None else max(timeout, META_TIMEOUT)
            cache.set(where.meta_key, asdict(entry), timeout=meta_timeout)
        else:
            logger.warning("Sitemap cache refused %s chunks of %s", len(failed), where.body_key)
    except Exception:
        logger.warning("Sitemap cache unavailable: %s not stored", where.body_key, exc_info=True)
    return entry, data


def _chunk_keys(body_key: str, entry: Entry) -> list[str]:
    return [f"{body_key}:{i}" for i in range(entry.chunks)]


def _joined(keys: list[str], found: dict[str, Any]) -> bytes | None:
    if len(found) != len(keys):
        return None  # evicted in part: render again
    return b"".join(found[k] for k in keys)


def _cached_body(cache: BaseCache, body_key: str, entry: Entry) -> bytes | None:
    keys = _chunk_keys(body_key, entry)
    return _joined(keys, cache.get_many(keys))


async def _acached_body(cache: BaseCache, body_key: str, entry: Entry) -> bytes | None:
    keys = _chunk_keys(body_key, entry)
    return _joined(keys, await cache.aget_many(keys))


# Responses -----------------------------------------------------------------

_GZIP_RE = re.compile(r"(?:^|,)\s*(gzip|\*)\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*(?=,|$)", re.I)


def accepts_gzip(request: HttpRequest) -> bool:
    """Whether Accept-Encoding admits gzip (``gzip;q=0`` refuses it)."""
    header = request.META.get("HTTP_ACCEPT_ENCODING", "")
    for match in _GZIP_RE.finditer(header):
        quality = match.group(2)
        try:
            if quality is None or float(quality) > 0:
                return True
        except ValueError:
            continue
    return False


def _gunzip(data: bytes) -> Iterator[bytes]:
    decompressor = zlib.decompressobj(31)
    for start in range(0, len(data), 64 * 1024):
        out = decompressor.decompress(data[start : start + 64 * 1024])
        if out:
            yield out
    tail = decompressor.flush()
    if tail:
        yield tail


def finish(response: HttpResponseBase, last_modified: int | None = None) -> HttpResponseBase:
    """Headers every sitemap response carries."""
    if last_modified is not None:
        response["Last-Modified"] = http_date(last_modified)
    response["X-Robots-Tag"] = conf.X_ROBOTS_TAG
    if conf.CACHE_CONTROL is not None and response.status_code in (200, 304):
        response["Cache-Control"] = conf.CACHE_CONTROL
    return response


def _entry_etag(request: HttpRequest, entry: Entry) -> tuple[str, bool]:
    """The ETag of ``entry`` as sent to ``request``, and whether it is gzip."""
    gzip = conf.GZIP and accepts_gzip(request)
    # Strong ETags differ per content coding (RFC 9110 §8.8.3).
    return (f'"{entry.etag}-gz"' if gzip else f'"{entry.etag}"'), gzip


def _needs_body(request: HttpRequest, entry: Entry) -> bool:
    """Whether the response for ``entry`` sends its body (not a 304, not HEAD)."""
    if request.method == "HEAD":
        return False
    etag, _ = _entry_etag(request, entry)
    return get_conditional_response(request, etag=etag, last_modified=entry.last_modified) is None


def _entry_response(
    request: HttpRequest,
    entry: Entry,
    content_type: str,
    body: Callable[[], bytes | None] | bytes,
) -> HttpResponseBase | None:
    """The response for a cached entry; None when its body was evicted."""
    etag, gzip = _entry_etag(request, entry)
    not_modified = get_conditional_response(request, etag=etag, last_modified=entry.last_modified)
    response: HttpResponseBase
    if not_modified is not None:
        response = not_modified
    elif request.method == "HEAD":
        response = HttpResponse(content_type=content_type)
        response["Content-Length"] = str(entry.gzip_size if gzip else entry.size)
        if gzip:
            response["Content-Encoding"] = "gzip"
    else:
        data = body if isinstance(body, bytes) else body()
        if data is None:
            return None
        if gzip:
            response = HttpResponse(data, content_type=content_type)
            response["Content-Encoding"] = "gzip"
            response["Content-Length"] = str(len(data))
        elif entry.size <= IN_MEMORY_BYTES:
            # Small enough to hold: a plain response, whose ``.content`` a
            # test (``self.client.get(...).content``) can read, as with contrib.
            response = HttpResponse(b"".join(_gunzip(data)), content_type=content_type)
            response["Content-Length"] = str(entry.size)
        else:
            # Decompressed as it is sent: memory follows the compressed size.
            response = streaming_response(request, _gunzip(data), content_type)
            response["Content-Length"] = str(entry.size)
    response["ETag"] = etag
    if conf.GZIP:
        response["Vary"] = "Accept-Encoding"
    return finish(response, entry.last_modified)


def streaming_response(
    request: HttpRequest, chunks: Iterator[bytes], content_type: str
) -> StreamingHttpResponse:
    """A response sending ``chunks`` as they are produced, under WSGI and ASGI.

    Under ASGI a synchronous iterator would be collected whole before the
    first byte is sent (Django warns); there each chunk is produced in the
    request's sync thread (``thread_sensitive``: the database connection the
    view used) and awaited, so the event loop never blocks and memory stays
    flat. Under WSGI the iterator is sent as it is.
    """
    from django.core.handlers.asgi import ASGIRequest

    if isinstance(request, ASGIRequest):
        return StreamingHttpResponse(_in_thread(chunks), content_type=content_type)
    return StreamingHttpResponse(chunks, content_type=content_type)


def _next_chunk(iterator: Iterator[bytes]) -> bytes | None:
    return next(iterator, None)


async def _in_thread(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    from asgiref.sync import sync_to_async

    iterator = iter(chunks)
    step = sync_to_async(_next_chunk, thread_sensitive=True)
    try:
        while True:
            chunk = await step(iterator)
            if chunk is None:
                return
            yield chunk
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            # Runs the generator's cleanup (logging, releases) in its thread.
            await sync_to_async(close, thread_sensitive=True)()


def respond_uncached(
    request: HttpRequest, prepared: Prepared, content_type: str
) -> HttpResponseBase:
    """Stream a file without the cache; 304 and HEAD from its lastmod alone."""
    last_modified = timestamp(prepared.lastmod)
    response = respond_conditionally(
        request,
        last_modified,
        content_type,
        lambda: streaming_response(request, prepared.body(), content_type),
    )
    return finish(response, last_modified)


def respond_conditionally(
    request: HttpRequest,
    last_modified: int | None,
    content_type: str,
    full: Callable[[], HttpResponseBase],
) -> HttpResponseBase:
    """A 304 when ``request`` is satisfied by ``last_modified``, headers only
    for HEAD, else ``full()``: the body is produced only when it is sent."""
    not_modified = get_conditional_response(request, last_modified=last_modified)
    if not_modified is not None:
        return not_modified
    if request.method == "HEAD":
        return HttpResponse(content_type=content_type)
    return full()


def _fingerprint(source: Source) -> str | None:
    if not conf.CACHE_FRESHNESS_CHECK or source.fingerprint is None:
        return None
    return hashlib.sha256(repr(source.fingerprint()).encode()).hexdigest()[:32]


def _usable(where: Lookup, fingerprint: str | None) -> Entry | None:
    hit = where.entry
    return hit if hit is not None and hit.fingerprint == fingerprint else None


def _uncached(request: HttpRequest, source: Source) -> HttpResponseBase:
    logger.warning("Sitemap cache unavailable; rendering without it", exc_info=True)
    return respond_uncached(request, source.prepare(), source.content_type)


def serve(request: HttpRequest, site: SiteContext, source: Source) -> HttpResponseBase:
    """Answer ``request`` for ``source`` from the cache, rendering on a miss.

    ``aserve`` is the same under an async handler; the steps they share are
    the functions below, the render (``_render_locked``) is one function.
    """
    try:
        cache = get_cache()
        where = _lookup(cache, site, request, source)
    except Exception:
        return _uncached(request, source)

    fingerprint = _fingerprint(source)
    hit = _usable(where, fingerprint)
    if hit is not None:
        try:
            response = _entry_response(
                request,
                hit,
                source.content_type,
                lambda: _cached_body(cache, where.body_key, hit),
            )
        except Exception:
            logger.warning("Sitemap cache unavailable; rendering without it", exc_info=True)
            response = None
        if response is not None:
            return response

    # A miss. The render lock comes before any query: while one request
    # renders, the others wait for its file and cost the database nothing (a
    # stampede of cold requests is one render's queries, index included).
    token = _new_token()
    try:
        locked = cache.add(where.lock_key, token, timeout=conf.CACHE_LOCK_TIMEOUT)
    except Exception:
        return _uncached(request, source)
    if locked:
        # The lock may be free because a holder just stored the file and
        # released it after this request's lookup missed: serve that file.
        try:
            stored = _stored(cache, where, fingerprint)
        except Exception:
            stored = None
        if stored is not None:
            _release(cache, where.lock_key, token)
            return _stored_response(request, source, stored)
    else:
        waited = _wait_for_entry(cache, where, fingerprint)
        if waited is not None:
            response = _entry_response(request, waited[0], source.content_type, waited[1])
            if response is not None:
                return response
        # The holder gave up (a 404, an error) or is slow: answer here.
    return _render_locked(request, source, cache, where, fingerprint, token if locked else None)


async def aserve(request: HttpRequest, site: SiteContext, source: Source) -> HttpResponseBase:
    """``serve`` for an async handler (ASGI).

    The cache is read through its async API (``aget_many``, ``aadd``), so a
    warm file is answered without the request's sync thread, which every
    sync view of the project shares under ASGI; a wait for another request's
    render polls with ``asyncio.sleep``. The queries and the render run in
    the sync thread (``thread_sensitive``, the connection of the request).
    """
    from asgiref.sync import sync_to_async

    def uncached() -> Awaitable[HttpResponseBase]:
        return sync_to_async(_uncached, thread_sensitive=True)(request, source)

    try:
        cache = get_cache()
        where = await _alookup(cache, site, request, source)
    except Exception:
        return await uncached()

    fingerprint = None
    if conf.CACHE_FRESHNESS_CHECK and source.fingerprint is not None:
        fingerprint = await sync_to_async(_fingerprint, thread_sensitive=True)(source)
    hit = _usable(where, fingerprint)
    if hit is not None:
        try:
            body = (
                await _acached_body(cache, where.body_key, hit)
                if _needs_body(request, hit)
                else b""
            )
            response = (
                None if body is None else _entry_response(request, hit, source.content_type, body)
            )
        except Exception:
            logger.warning("Sitemap cache unavailable; rendering without it", exc_info=True)
            response = None
        if response is not None:
            return response

    token = _new_token()
    try:
        locked = await cache.aadd(where.lock_key, token, timeout=conf.CACHE_LOCK_TIMEOUT)
    except Exception:
        return await uncached()
    if locked:
        try:
            stored = await _astored(cache, where, fingerprint)
        except Exception:
            stored = None
        if stored is not None:
            await _arelease(cache, where.lock_key, token)
            return _stored_response(request, source, stored)
    else:
        waited = await _await_entry(cache, where, fingerprint)
        if waited is not None:
            response = _entry_response(request, waited[0], source.content_type, waited[1])
            if response is not None:
                return response
    render = sync_to_async(_render_locked, thread_sensitive=True)
    return await render(request, source, cache, where, fingerprint, token if locked else None)


def _stored_response(
    request: HttpRequest, source: Source, stored: tuple[Entry, bytes]
) -> HttpResponseBase:
    response = _entry_response(request, stored[0], source.content_type, stored[1])
    assert response is not None  # the body is in hand
    return response


def _render_locked(
    request: HttpRequest,
    source: Source,
    cache: BaseCache,
    where: Lookup,
    fingerprint: str | None,
    token: str | None,
) -> HttpResponseBase:
    """Render the file into the cache and answer; ``token`` is the render
    lock this request holds (released here), None when it holds none."""
    try:
        # The cheap queries: a 404, a HEAD or a matching If-Modified-Since
        # needs no render.
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
        if token is None:
            logger.warning(
                "Sitemap cache: another process holds the render lock of %s for over %ss; "
                "rendering here too.",
                request.path,
                conf.CACHE_LOCK_WAIT,
            )
        entry, data = _render_and_store(cache, where, prepared, fingerprint)
    finally:
        if token is not None:
            _release(cache, where.lock_key, token)
    return _stored_response(request, source, (entry, data))


def _release(cache: BaseCache, lock_key: str, token: str) -> None:
    """Delete the render lock if this request still holds it."""
    try:
        if cache.get(lock_key) == token:
            cache.delete(lock_key)
    except Exception:
        logger.warning("Sitemap cache: could not release %s", lock_key, exc_info=True)


async def _arelease(cache: BaseCache, lock_key: str, token: str) -> None:
    try:
        if await cache.aget(lock_key) == token:
            await cache.adelete(lock_key)
    except Exception:
        logger.warning("Sitemap cache: could not release %s", lock_key, exc_info=True)


def _current(entry: Entry | None, where: Lookup, fingerprint: str | None) -> Entry | None:
    if entry is None or not entry.is_current(where.stamp) or entry.fingerprint != fingerprint:
        return None
    return entry


def _stored(cache: BaseCache, where: Lookup, fingerprint: str | None) -> tuple[Entry, bytes] | None:
    """The file's current entry and body, when the cache holds them now."""
    entry = _current(Entry.from_cache(cache.get(where.meta_key)), where, fingerprint)
    data = None if entry is None else _cached_body(cache, where.body_key, entry)
    return None if entry is None or data is None else (entry, data)


async def _astored(
    cache: BaseCache, where: Lookup, fingerprint: str | None
) -> tuple[Entry, bytes] | None:
    entry = _current(Entry.from_cache(await cache.aget(where.meta_key)), where, fingerprint)
    data = None if entry is None else await _acached_body(cache, where.body_key, entry)
    return None if entry is None or data is None else (entry, data)


def _poll_delays() -> Iterator[float]:
    """The pauses between polls for another request's render, up to ``CACHE_LOCK_WAIT``."""
    deadline = time.monotonic() + conf.CACHE_LOCK_WAIT
    attempt = 0
    while time.monotonic() < deadline:
        yield _POLL_SECONDS[min(attempt, len(_POLL_SECONDS) - 1)]
        attempt += 1


# While waiting: the lock first, then the metadata. The holder stores the
# metadata before it releases the lock, so a lock already gone before a
# metadata read that finds nothing usable means the holder gave up (or died
# and its lock expired). Read the other way round, a holder finishing between
# the two reads looks like one that died.


def _wait_for_entry(
    cache: BaseCache, where: Lookup, fingerprint: str | None
) -> tuple[Entry, bytes] | None:
    """Poll for the entry another process is rendering (see above)."""
    for delay in _poll_delays():
        time.sleep(delay)
        try:
            held = cache.get(where.lock_key) is not None
            stored = _stored(cache, where, fingerprint)
        except Exception:
            return None
        if stored is not None or not held:
            return stored
    return None


async def _await_entry(
    cache: BaseCache, where: Lookup, fingerprint: str | None
) -> tuple[Entry, bytes] | None:
    """``_wait_for_entry`` without blocking the event loop or the sync thread."""
    for delay in _poll_delays():
        await asyncio.sleep(delay)
        try:
            held = await cache.aget(where.lock_key) is not None
            stored = await _astored(cache, where, fingerprint)
        except Exception:
            return None
        if stored is not None or not held:
            return stored
    return None
