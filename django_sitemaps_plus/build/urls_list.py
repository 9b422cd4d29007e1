"""Generator mode (``build_sitemaps --from-urls``): a plain list of URLs to
sitemap files (XML or text), split at 50,000 URLs or 52,428,800 bytes, with
an index over several XML files. Nothing of a build's plan, lock or
manifest: the files are written once, each replaced atomically.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO
from urllib.parse import urlsplit

from django.core.files.storage import Storage

from django_sitemaps_plus import protocol
from django_sitemaps_plus.build.files import INDEX_NAME
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.engine.location import to_uri
from django_sitemaps_plus.serving.storage import write_atomic, write_bytes


class UrlListError(ValueError):
    """A list of URLs that cannot become a sitemap at all."""


@dataclass
class Generated:
    """What ``generate_from_urls`` wrote."""

    files: list[str]
    urls: int
    rejected: list[tuple[int, str, str]]  # line number, text, why
    robots_lines: list[str]


def _read_urls(lines: Iterable[str], rejected: list[tuple[int, str, str]]) -> Iterator[str]:
    origin: tuple[str, str] | None = None
    seen: set[str] = set()
    for number, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            url = to_uri(text)
        except ValueError as exc:
            rejected.append((number, text, str(exc)))
            continue
        problem = protocol.loc_problem(url)
        if problem is None:
            parts = urlsplit(url)
            here = (parts.scheme, parts.netloc.lower())
            if origin is None:
                origin = here
            elif here != origin:
                problem = (
                    f"is on {here[0]}://{here[1]}, not {origin[0]}://{origin[1]} like the first "
                    "URL (a sitemap lists one scheme and host)"
                )
            elif url in seen:
                problem = "is a duplicate"
        if problem is not None:
            rejected.append((number, text, problem))
            continue
        seen.add(url)
        yield url


def generate_from_urls(
    lines: Iterable[str],
    storage: Storage,
    *,
    fmt: str = "xml",
    lastmod: str | None = None,
    url_prefix: str = "/",
    limit: int = protocol.MAX_URLS_PER_FILE,
) -> Generated:
    """Sitemap files for a plain list of absolute URLs (one per line).
    Up to ``limit`` URLs (and 52,428,800 bytes) per file: one ``sitemap.xml``
    (or ``sitemap.txt``) when they fit, else ``sitemap-1.xml``, ... and, for
    XML, an index ``sitemap.xml`` naming them (text files cannot be indexed:
    each gets its own robots.txt line). ``lastmod`` (W3C Datetime) is given
    to every URL. ``url_prefix`` is the path the files are served under.
    """
    if fmt not in ("xml", "txt"):
        raise UrlListError(f"format {fmt!r}: 'xml' or 'txt'")
    if lastmod is not None and not protocol.is_w3c_datetime(lastmod):
        raise UrlListError(f"lastmod {lastmod!r} is not a W3C Datetime (e.g. 2024-05-01)")
    if not url_prefix.startswith("/"):
        url_prefix = "/" + url_prefix
    if not url_prefix.endswith("/"):
        url_prefix += "/"
    rejected: list[tuple[int, str, str]] = []
    parts: list[IO[bytes]] = []
    origin = ""
    count = 0

    def new_part() -> IO[bytes]:
        spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
        if fmt == "xml":
            spool.write(xml.root_open("urlset", {}).encode())
        parts.append(spool)
        return spool

    closing = b"</urlset>\n" if fmt == "xml" else b""
    current: IO[bytes] | None = None
    in_part = 0
    part_bytes = 0
    for url in _read_urls(lines, rejected):
        if not origin:
            split = urlsplit(url)
            origin = f"{split.scheme}://{split.netloc}"
        if fmt == "xml":
            entry = xml.url_entry(xml.escape(url), lastmod).encode()
        else:
            entry = f"{url}\n".encode()
        if (
            current is None
            or in_part >= limit
            or (part_bytes + len(entry) + len(closing) > protocol.MAX_FILE_BYTES)
        ):
            if current is not None:
                current.write(closing)
            current = new_part()
            in_part = 0
            part_bytes = current.tell()
        current.write(entry)
        in_part += 1
        part_bytes += len(entry)
        count += 1
    if current is None:
        raise UrlListError("no valid URL in the list")
    current.write(closing)

    files = (
        [f"sitemap.{fmt}"]
        if len(parts) == 1
        else [f"sitemap-{number}.{fmt}" for number in range(1, len(parts) + 1)]
    )
    try:
        for name, part in zip(files, parts):
            write_atomic(storage, name, part)
    finally:
        for part in parts:
            part.close()
    # robots.txt names the index of several XML files; text files cannot be
    # indexed: a line each.
    listed = files
    if fmt == "xml" and len(parts) > 1:
        locs = [xml.IndexedFile(f"{origin}{url_prefix}{name}", None) for name in files]
        write_bytes(storage, INDEX_NAME, xml.stream_index(locs))
        files, listed = [*files, INDEX_NAME], [INDEX_NAME]
    robots = [f"Sitemap: {origin}{url_prefix}{name}" for name in listed]
    return Generated(files, count, rejected, robots)
