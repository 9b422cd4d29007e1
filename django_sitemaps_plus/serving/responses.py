"""HTTP responses of sitemap files, cached or not: gzip while streaming,
conditional GET (304 from ``Last-Modified``), the common headers (``finish``)
and a streamed body that Django sends in chunks under WSGI and ASGI.

``cache`` answers cached files with them, ``storage`` built files, the views
uncached ones (``respond_uncached``).
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine.lastmod import LastmodValue

#: gzip level of cached and built files: 6 is zlib's default, within a few
#: percent of 9's size at half its time.
GZIP_LEVEL = 6


#: The gzip stream of a file is flushed once after this many bytes of input
#: (so its compressed bytes, cached and built alike, stay those of the
#: releases that sent a cold file while it rendered).
FLUSH_AT_BYTES = 4 * 1024


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
    """gzip ``chunks`` as they stream, at ``GZIP_LEVEL``, with one sync flush
    after the first ``FLUSH_AT_BYTES`` of input. The flush is at that input
    offset whatever the chunking, so equal content gives equal bytes (the
    cache's and ``build``'s)."""
    # wbits=31: a gzip container with mtime 0.
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
    before_flush = FLUSH_AT_BYTES
    for chunk in chunks:
        if 0 < before_flush <= len(chunk):
            head, chunk = chunk[:before_flush], chunk[before_flush:]
            before_flush = 0
            out = compressor.compress(head) + compressor.flush(zlib.Z_SYNC_FLUSH)
            out += compressor.compress(chunk)
        else:
            before_flush = max(0, before_flush - len(chunk))
            out = compressor.compress(chunk)
        if out:
            yield out
    yield compressor.flush()


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


def gunzip_chunks(data: bytes) -> Iterator[bytes]:
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
            close_iterator(chunks)
            raise
        return StreamingHttpResponse(_InThread(chunks, first), content_type=content_type)
    return StreamingHttpResponse(chunks, content_type=content_type)


def close_iterator(iterator: object) -> None:
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
        close_iterator(self.iterator)


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


def as_utc(value: dt.date | dt.datetime) -> dt.datetime:
    """A lastmod as an aware datetime: a naive one is UTC, a date midnight
    UTC (as a file's W3C text reads). Not ``engine.lastmod.to_utc``, which
    reads a naive value from the database as local time (``USE_TZ`` off)."""
    if not isinstance(value, dt.datetime):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def timestamp(value: LastmodValue) -> int | None:
    """Seconds since the epoch of a lastmod (``as_utc``)."""
    return None if value is None else calendar.timegm(as_utc(value).utctimetuple())
