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
- **A model section's file is keyed by what it holds** (``BlockScope``):
  its stamp is the section's settings, its key range in the kept layout and
  the tokens of the key blocks in that range (``range_tokens``). A save
  bumps the tokens of its row's block (``block_tokens``) and the section's
  own token, which the index and ``sitemap.txt`` show: one save makes one
  file cold. ``invalidate()`` bumps every file's (``files_token``).
- **Stored compressed.** A file is rendered once, gzip-compressed while it
  streams, and stored in chunks of at most ``CHUNK_BYTES`` (Memcached's item
  limit is 1 MB) with a small metadata entry: strong ETag (SHA-256 of the
  uncompressed bytes), Last-Modified, sizes. Clients that accept gzip get the
  stored bytes; others get them decompressed on the fly. A cold file is
  rendered into the cache (``_Render``) and answered from the stored entry
  like a hit; the metadata is written only once the render has ended, so a
  render stopped midway stores nothing.
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

import calendar
import contextlib
import datetime as dt
import hashlib
import logging
import math
import re
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

from django.core.cache import BaseCache
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils import timezone
from django.utils.cache import get_conditional_response
from django.utils.http import http_date

from django_sitemaps_plus import locks, quiet
from django_sitemaps_plus.blocks import block_of
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
#: gzip level of cached and built files: 6 is zlib's default, within a few
#: percent of 9's size at half its time.
GZIP_LEVEL = 6
#: The gzip stream of a file is flushed once after this many bytes of input
#: (so its compressed bytes, cached and built alike, stay those of the
#: releases that sent a cold file while it rendered).
FLUSH_AT_BYTES = 4 * 1024
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
    #: A model section's file: keyed by the blocks it holds, not by its
    #: section's token (``BlockScope``).
    scope: BlockScope | None = None


def _version_key(name: str) -> str:
    return f"{KEY_PREFIX}:v:{name}"


def _new_token() -> str:
    return uuid.uuid4().hex[:16]


def _section_names(section: str | Section | Iterable[str | Section] | None) -> list[str]:
    if section is None:
        return [ALL]
    if isinstance(section, str) or hasattr(section, "get_name"):
        section = [section]  # type: ignore[list-item]
    return sorted({str(s) if isinstance(s, str) else s.get_name() for s in section})


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
    """``invalidate()`` without the signal: replace the version tokens of
    the sections and of all their files (``files_token``).

    Returns the names it bumped.
    """
    names = _section_names(section)
    bump_tokens([*names, *(files_token(name) for name in names if name != ALL)])
    return names


def bump_tokens(tokens: Iterable[str]) -> None:
    """Replace the version tokens named ``tokens`` (section names,
    ``files_token``s, ``block_tokens``), in one cache call."""
    tokens = sorted(set(tokens))
    if not tokens:
        return
    new = {_version_key(name): _new_token() for name in tokens}
    with contextlib.suppress(quiet.CacheDown):  # logged; the files expire by CACHE_TIMEOUT
        quiet.call(quiet.get_cache(), "set_many", new, timeout=None)


# Per-block tokens ----------------------------------------------------------------
#
# A model section's file is keyed by what it holds (docs/caching.md): the
# tokens of the key blocks its range covers, bumped by a save of a row in
# them, not by the section's token, which a save bumps for the index. A
# token of level ``L`` stands for ``BLOCK_FANOUT ** L`` consecutive blocks;
# a save bumps its block's token at every level, and a file reads the
# lowest level that covers its range in at most ``FILE_TOKENS`` tokens (a
# file over sparse keys spans many empty blocks).

#: Blocks one token of the next level stands for.
BLOCK_FANOUT = 64
#: Levels of tokens: 64 ** 11 blocks exceed any 64-bit key.
BLOCK_LEVELS = 11
#: Most block tokens a file's lookup reads.
FILE_TOKENS = 16


def files_token(section: str) -> str:
    """The token every file of a model section shows besides its blocks':
    ``invalidate()`` bumps it, and a save whose rows cannot be told."""
    return f"{section}#files"


def _block_token(section: str, width: int, level: int, group: int) -> str:
    return f"{section}#{width}:{level}:{group}"


def block_tokens(section: str, width: int, keys: Iterable[int]) -> set[str]:
    """The tokens a change of the rows ``keys`` bumps: their blocks' at every level."""
    tokens = set()
    for key in keys:
        block = block_of(key, width) - 1
        for level in range(BLOCK_LEVELS):
            tokens.add(_block_token(section, width, level, block // BLOCK_FANOUT**level))
    return tokens


def range_tokens(section: str, width: int, after: int | None, last: int) -> list[str]:
    """The tokens a file of the keys ``after < key <= last`` shows: its
    blocks' at the lowest level giving at most ``FILE_TOKENS`` of them."""
    first = 0 if after is None else block_of(after + 1, width) - 1
    level, low, high = _covering_groups(first, block_of(last, width) - 1)
    return [_block_token(section, width, level, g) for g in range(low, high + 1)]


def _covering_groups(first: int, end: int) -> tuple[int, int, int]:
    """The lowest level whose groups cover the blocks ``first`` to ``end``
    (counted from 0) in at most ``FILE_TOKENS`` tokens: (level, first
    group, last group)."""
    for level in range(BLOCK_LEVELS):
        size = BLOCK_FANOUT**level
        low, high = first // size, end // size
        if high - low < FILE_TOKENS or level == BLOCK_LEVELS - 1:
            return level, low, high
    raise AssertionError("unreachable")


#: Where a block token stands: (level, group).
TokenPlace = tuple[int, int]


def moved_blocks(
    section: str, width: int, last: int, kept: Mapping[TokenPlace, str] | None
) -> tuple[set[int], dict[TokenPlace, str]]:
    """The blocks 1 to ``last`` whose token moved since ``kept`` (tokens as
    they were read before, by place), found a level at a time: one
    ``get_many`` compares the groups covering those blocks in at most
    ``FILE_TOKENS`` tokens, the next the children of the groups that moved,
    down to the blocks. A save bumps its block's token at every level, so a
    group whose token held holds no moved block: a few calls, not one per
    block. ``kept`` None: every token of those blocks is read (to keep).

    A token not in the cache is made (one ``set_many`` per level), so none
    kept is ever "none" again after an eviction took a save's token away; a
    caller reads the rows after this, so a save that a made token hides
    bumps it again when it commits. Returns the moved blocks and the tokens
    read (to keep for the next comparison). Raises ``quiet.CacheDown`` when
    the cache fails.
    """
    cache = quiet.get_cache()
    level, low, high = _covering_groups(0, max(last, 1) - 1)
    places = [(level, group) for group in range(low, high + 1)]
    read: dict[TokenPlace, str] = {}
    moved: set[int] = set()
    while places:
        keys = {place: _version_key(_block_token(section, width, *place)) for place in places}
        found = quiet.call(cache, "get_many", list(keys.values()))
        made = {keys[place]: _new_token() for place in places if keys[place] not in found}
        if made:
            quiet.call(cache, "set_many", made, timeout=None)
        changed = []
        for place, key in keys.items():
            read[place] = found[key] if key in found else made[key]
            if kept is None or read[place] != kept.get(place):
                changed.append(place)
        places = []
        for level, group in changed:
            if level == 0:
                moved.add(group + 1)
                continue
            size = BLOCK_FANOUT ** (level - 1)
            children = range(group * BLOCK_FANOUT, (group + 1) * BLOCK_FANOUT)
            places += [(level - 1, c) for c in children if c * size < last]
    return moved, read


def top_token(section: str, width: int) -> str:
    """The token every save of the section's rows bumps (the top level's
    one group: 64 ** 10 blocks)."""
    return _block_token(section, width, BLOCK_LEVELS - 1, 0)


def token_keys(names: Iterable[str]) -> list[str]:
    """The cache keys of the version tokens ``names`` (``ALL``, a section,
    ``files_token``, ``top_token``)."""
    return [_version_key(name) for name in names]


def current_tokens(names: Sequence[str]) -> list[str]:
    """The current version tokens ``names`` (made when missing), in one
    ``get_many``: what a static build keeps a file's fingerprint with.
    Raises ``quiet.CacheDown`` when the cache fails."""
    cache = quiet.get_cache()
    found = quiet.call(cache, "get_many", [_version_key(name) for name in names])
    return versions_of(cache, names, found)


@dataclass(frozen=True)
class BlockScope:
    """What a model section's file is keyed by besides the site and path:
    the section's settings (``signature``), its key range in the kept
    layout, and the tokens of the blocks that range covers."""

    section: str
    width: int
    #: A hash of ``layout.signature``: a changed setting makes every file cold.
    signature: str
    #: The cache key of the kept layout's file key ranges.
    layout_key: str
    #: The file's key range in the kept ranges, or None (none kept, no such file).
    span_of: Callable[[Any], tuple[int | None, int] | None]
    #: The file's key range from a layout computed now (queries), or None.
    compute: Callable[[], tuple[int | None, int] | None]


def versions_of(cache: BaseCache, names: Sequence[str], found: dict[str, Any]) -> list[str]:
    """The current token of each name (from ``found``), creating missing ones."""
    tokens = []
    for name in names:
        key = _version_key(name)
        token = found.get(key)
        if token is None:
            token = _new_token()
            # add(): two processes creating the same token agree on the winner's.
            if not quiet.call(cache, "add", key, token, timeout=None):
                token = quiet.call(cache, "get", key) or token
        tokens.append(str(token))
    return tokens


@dataclass
class Lookup:
    """Where one file's current version lives in the cache, and what was found."""

    meta_key: str  # the file's metadata, across versions
    stamp: str  # the version tokens of the file's sections, hashed
    held: Entry | None  # the metadata found, of whatever version
    #: ``time.time()`` before the version tokens were read.
    as_of: float
    #: The held entry's chunks, read with the block tokens (a scoped file)...
    prefetched: dict[str, Any] | None = None
    #: ...as the answer to the request that ``held`` gives said.
    answer: _Answer | None = None

    @property
    def body_key(self) -> str:
        """The prefix of this version's chunks."""
        return _body_key(self.meta_key, self.stamp)

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


def _body_key(meta_key: str, stamp: str) -> str:
    return f"{KEY_PREFIX}:b:{meta_key.rsplit(':', 1)[1]}:{stamp}"


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
    return Lookup(meta_key, stamp, Entry.from_cache(meta), as_of)


def _lookup(cache: BaseCache, site: SiteContext, request: HttpRequest, source: Source) -> Lookup:
    """Version tokens and the file's metadata, in one round trip when warm
    (a scoped file: two, the second with its body)."""
    meta_key, names = _lookup_keys(site, request, source)
    scope = source.scope
    keys = [*(_version_key(n) for n in names), meta_key]
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
    held = Entry.from_cache(found.get(meta_key))
    answer = None if held is None else _answer(request, held)
    chunk_keys: list[str] = []
    if held is not None and answer is not None and answer.needs_body:
        chunk_keys = _chunk_keys(meta_key, held)
    read: dict[str, Any] = quiet.call(
        cache, "get_many", [*(_version_key(n) for n in blocks), *chunk_keys]
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


def version_keys(sections: Sequence[Section]) -> list[str]:
    """The cache keys of the version tokens ``sections``' files depend on."""
    return [_version_key(name) for name in [ALL, *sorted(s.get_name() for s in sections)]]


def version_stamp(cache: BaseCache, sections: Sequence[Section], found: dict[str, Any]) -> str:
    """The current version tokens of ``sections`` (read into ``found``, or
    made), as one string: it changes with every save or ``invalidate()``."""
    names = [ALL, *sorted(s.get_name() for s in sections)]
    return "\n".join(versions_of(cache, names, found))


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
        cache = quiet.get_cache()
        names = [ALL, *sorted(s.get_name() for s in sections)]
        found: dict[str, Any] = quiet.call(cache, "get_many", [_version_key(n) for n in names])
        versions = versions_of(cache, names, found)
        stamp = "\n".join([site.cache_key, what, *(f"{n}={v}" for n, v in zip(names, versions))])
        key = f"{KEY_PREFIX}:r:{hashlib.sha256(stamp.encode()).hexdigest()[:40]}"
        held = quiet.call(cache, "get", key)
    except Exception as error:
        quiet.failed(error)
        return compute()
    if isinstance(held, tuple) and len(held) == 1:
        return cast(T, held[0])
    value = compute()
    # Wrapped: a computed None is remembered too.
    quiet.quietly(None, cache, "set", key, (value,), timeout=timeout)
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


class _Gzip:
    """gzip at ``GZIP_LEVEL``, with one sync flush after the first
    ``FLUSH_AT_BYTES`` of input. The flush is at that input offset whatever
    the chunking, so equal content gives equal bytes (the cache's and
    ``build``'s)."""

    def __init__(self) -> None:
        # wbits=31: a gzip container with mtime 0.
        self.compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
        self.before_flush = FLUSH_AT_BYTES

    def compress(self, chunk: bytes) -> bytes:
        if 0 < self.before_flush <= len(chunk):
            head, chunk = chunk[: self.before_flush], chunk[self.before_flush :]
            self.before_flush = 0
            flushed = self.compressor.compress(head) + self.compressor.flush(zlib.Z_SYNC_FLUSH)
            return flushed + self.compressor.compress(chunk)
        self.before_flush = max(0, self.before_flush - len(chunk))
        return self.compressor.compress(chunk)

    def finish(self) -> bytes:
        return self.compressor.flush()


def gzip_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """gzip ``chunks`` as they stream (also used by ``build``)."""
    packer = _Gzip()
    for chunk in chunks:
        if out := packer.compress(chunk):
            yield out
    yield packer.finish()


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


class _Render:
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
        self.render_id = _new_token()
        self.timeout = _timeout(prepared.expires_at)
        self.storing = True
        self.entry: Entry | None = None

    def __iter__(self) -> Iterator[bytes]:
        body = self.prepared.body()
        measured = Measured(body)
        packer = _Gzip()
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
            _close(body)
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


def _chunk_keys(meta_key: str, entry: Entry) -> list[str]:
    """The keys of the body of the file ``meta_key``'s version ``entry``."""
    body_key = _body_key(meta_key, entry.stamp)
    prefix = f"{body_key}:{entry.render}" if entry.render else body_key
    return [f"{prefix}:{i}" for i in range(entry.chunks)]


def _joined(keys: list[str], found: dict[str, Any]) -> bytes | None:
    if len(found) != len(keys):
        return None  # evicted in part: render again
    return b"".join(found[k] for k in keys)


def _cached_body(
    cache: BaseCache, meta_key: str, entry: Entry, prefetched: dict[str, Any] | None = None
) -> bytes | None:
    keys = _chunk_keys(meta_key, entry)
    if prefetched is not None:
        return _joined(keys, prefetched)
    return _joined(keys, quiet.call(cache, "get_many", keys))


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


#: Plain bytes of the first chunk a stored file is decompressed into, so
#: the first byte leaves after these rather than after a whole slice's
#: worth (64 KiB of gzip is about 640 KiB of XML).
FIRST_PLAIN_CHUNK = 16 * 1024


def _gunzip(data: bytes) -> Iterator[bytes]:
    decompressor = zlib.decompressobj(31)
    first = decompressor.decompress(data[: 64 * 1024], FIRST_PLAIN_CHUNK)
    if first:
        yield first
    # What the first call left of its slice, then the slices after it.
    rest: list[bytes | memoryview] = (
        [decompressor.unconsumed_tail] if decompressor.unconsumed_tail else []
    )
    view = memoryview(data)
    rest += [view[start : start + 64 * 1024] for start in range(64 * 1024, len(data), 64 * 1024)]
    for piece in rest:
        out = decompressor.decompress(piece)
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


def _answer(request: HttpRequest, entry: Entry) -> _Answer:
    gzip = conf.GZIP and accepts_gzip(request)
    # Strong ETags differ per content coding (RFC 9110 §8.8.3).
    etag = f'"{entry.etag}-gz"' if gzip else f'"{entry.etag}"'
    not_modified = get_conditional_response(request, etag=etag, last_modified=entry.last_modified)
    return _Answer(etag, gzip, not_modified, request.method == "HEAD")


def _entry_response(
    request: HttpRequest, entry: Entry, content_type: str, answer: _Answer, data: bytes
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
        response = HttpResponse(b"".join(_gunzip(data)), content_type=content_type)
        response["Content-Length"] = str(entry.size)
    else:
        # Decompressed as it is sent: memory follows the compressed size.
        response = streaming_response(request, _gunzip(data), content_type)
        response["Content-Length"] = str(entry.size)
    response["ETag"] = answer.etag
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
    flat. Called by the (sync) view, in that thread, it makes the first chunk
    at once: the first byte does not wait for one more trip to the thread.
    Under WSGI the iterator is sent as it is.
    """
    if isinstance(request, ASGIRequest):
        chunks = iter(chunks)
        try:
            first = _next_chunk(chunks)
        except BaseException:
            _close(chunks)
            raise
        return StreamingHttpResponse(_InThread(chunks, first), content_type=content_type)
    return StreamingHttpResponse(chunks, content_type=content_type)


def _close(iterator: Iterator[bytes]) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


def _next_chunk(iterator: Iterator[bytes]) -> bytes | None:
    return next(iterator, None)


class _InThread:
    """An async iterator over ``chunks``, each produced in the request's sync thread.
    ``close()`` (which Django's response calls, in that thread, when it is
    done, sent or not) closes ``chunks``: their cleanup (a transaction, a
    render lock) runs even when the client left before the first chunk.
    """

    def __init__(self, chunks: Iterator[bytes], first: bytes | None = None) -> None:
        from asgiref.sync import sync_to_async

        self.iterator = chunks
        #: The first chunk, made by the view (None: there is none).
        self.first = first
        self.step = sync_to_async(_next_chunk, thread_sensitive=True)

    def __aiter__(self) -> _InThread:
        return self

    async def __anext__(self) -> bytes:
        if self.first is not None:
            first, self.first = self.first, None
            return first
        chunk = await self.step(self.iterator)
        if chunk is None:
            raise StopAsyncIteration
        return chunk

    def close(self) -> None:
        _close(self.iterator)


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
            _close(self.chunks)
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
    data = _cached_body(cache, where.meta_key, held, where.prefetched) if answer.needs_body else b""
    if data is None:
        return None
    return _entry_response(request, held, source.content_type, answer, data)


_CONDITIONAL_HEADERS = (
    "HTTP_IF_MODIFIED_SINCE",
    "HTTP_IF_NONE_MATCH",
    "HTTP_IF_MATCH",
    "HTTP_IF_UNMODIFIED_SINCE",
    "HTTP_IF_RANGE",
)


def is_conditional(request: HttpRequest) -> bool:
    """Whether ``request`` carries a conditional header (RFC 9110 section 13)."""
    return any(header in request.META for header in _CONDITIONAL_HEADERS)


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
    entry, data = _Render(cache, where, prepared, fingerprint).whole()
    return _entry_response(request, entry, source.content_type, _answer(request, entry), data)


def _is_current(entry: Entry | None, where: Lookup, fingerprint: str | None) -> bool:
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
    entry = Entry.from_cache(quiet.call(cache, "get", where.meta_key))
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
