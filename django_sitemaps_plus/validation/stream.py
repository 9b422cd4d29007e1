"""Raw bytes to sitemap bytes: gzip inflated as a stream, capped at the limit.

The protocol's 52,428,800-byte limit applies to the uncompressed size, so
gzip is inflated in bounded steps and reading stops just past the limit: a
gzip bomb costs at most one step of memory, never its inflated size.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

from django_sitemaps_plus import protocol
from django_sitemaps_plus.validation.report import FileReport

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
#: Most bytes one inflate step may produce.
INFLATE_STEP = 1 << 16


class Payload:
    """Iterates the uncompressed bytes of a sitemap, at most ``limit`` of them.

    Problems with the container (zip, corrupt gzip, too large) are added to
    ``report``; ``truncated`` tells the parser that the end it sees is ours.
    """

    def __init__(
        self,
        raw: Iterable[bytes],
        report: FileReport,
        *,
        limit: int = protocol.MAX_FILE_BYTES,
    ) -> None:
        self._raw = iter(raw)
        self._report = report
        self.limit = limit
        self.total = 0
        self.truncated = False

    def __iter__(self) -> Iterator[bytes]:
        first = b""
        for chunk in self._raw:
            first += chunk
            if len(first) >= 4:
                break
        if first.startswith(ZIP_MAGIC):
            self._report.add("SM114", "a zip archive; sitemaps may only be gzip-compressed")
            return
        if first.startswith(GZIP_MAGIC):
            source: Iterator[bytes] = self._inflate(_chain(first, self._raw))
        else:
            source = _chain(first, self._raw)
        for chunk in _sliced(source):
            room = self.limit - self.total
            if len(chunk) > room:
                self.total += room
                self.truncated = True
                if room:
                    yield chunk[:room]
                self._report.add(
                    "SM503",
                    f"more than {self.limit:,} bytes uncompressed; validation stopped there",
                )
                return
            self.total += len(chunk)
            if chunk:
                yield chunk

    def _inflate(self, raw: Iterator[bytes]) -> Iterator[bytes]:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            for chunk in raw:
                pending = chunk
                while pending:
                    yield inflater.decompress(pending, INFLATE_STEP)
                    pending = inflater.unconsumed_tail
                    if inflater.eof:
                        # Concatenated gzip members are one stream (RFC 1952).
                        pending = inflater.unused_data + pending
                        if not pending.strip(b"\x00"):
                            break
                        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while not inflater.eof:
                more = inflater.decompress(b"", INFLATE_STEP)
                if not more:
                    break
                yield more
        except zlib.error as exc:
            self._report.add("SM113", f"gzip data does not decompress: {exc}")
            return
        if not inflater.eof:
            self._report.add("SM113", "gzip stream ends before its end marker (truncated)")


def _sliced(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Chunks of at most ``INFLATE_STEP`` bytes: libxml2 refuses one huge feed."""
    for chunk in chunks:
        if len(chunk) <= INFLATE_STEP:
            yield chunk
            continue
        view = memoryview(chunk)
        for start in range(0, len(chunk), INFLATE_STEP):
            yield bytes(view[start : start + INFLATE_STEP])


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest
