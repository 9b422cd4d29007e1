"""Streaming writers for ``urlset``, ``sitemapindex`` and text sitemaps.

Entries are rendered as ``str`` one URL at a time and sent in batches of
encoded bytes, so memory stays flat whatever the page size. Children follow the
XSD sequence: loc, lastmod, changefreq, priority, then extension elements.
The root declares only the namespaces the file uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice

from django_sitemaps_plus import protocol

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
#: Entries joined into one chunk of the streamed response.
BATCH_SIZE = 1_000

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def escape(value: str) -> str:
    """Escape the five XML special characters (protocol §1: entity escaping)."""
    if "&" in value or "<" in value or ">" in value or '"' in value or "'" in value:
        return value.translate(_ESCAPES)
    return value


def byte_length(value: str) -> int:
    """UTF-8 length of ``value``; cheap for the ASCII text of most entries."""
    return len(value) if value.isascii() else len(value.encode())


def _root_open(root: str, namespaces: Mapping[str, str]) -> str:
    declarations = "".join(f' xmlns:{prefix}="{uri}"' for prefix, uri in sorted(namespaces.items()))
    return f'{XML_DECLARATION}<{root} xmlns="{protocol.SITEMAP_NS}"{declarations}>\n'


def urlset_envelope_bytes(namespaces: Mapping[str, str]) -> int:
    """Bytes of a urlset's declaration, opening and closing tags."""
    return byte_length(_root_open("urlset", namespaces)) + len("</urlset>\n")


def url_entry(
    loc: str,
    lastmod: str | None = None,
    changefreq: str | None = None,
    priority: str | None = None,
    children: str = "",
) -> str:
    """One ``<url>`` element; ``loc`` must already be XML-escaped."""
    parts = ["<url><loc>", loc, "</loc>"]
    if lastmod:
        parts += ("<lastmod>", lastmod, "</lastmod>")
    if changefreq:
        parts += ("<changefreq>", changefreq, "</changefreq>")
    if priority:
        parts += ("<priority>", priority, "</priority>")
    parts += (children, "</url>\n")
    return "".join(parts)


def _batched(head: str, entries: Iterable[str], tail: str) -> Iterator[bytes]:
    # islice and join take each batch at C speed, not an append per entry.
    iterator = iter(entries)
    text = head + "".join(islice(iterator, BATCH_SIZE))
    while True:
        batch = list(islice(iterator, BATCH_SIZE))
        if not batch:
            yield (text + tail).encode()
            return
        yield text.encode()
        text = "".join(batch)


def stream_urlset(entries: Iterable[str], namespaces: Mapping[str, str]) -> Iterator[bytes]:
    """A ``urlset`` document from pre-rendered ``<url>`` entries."""
    return _batched(_root_open("urlset", namespaces), entries, "</urlset>\n")


def sitemap_entry(loc: str, lastmod: str | None) -> str:
    """One ``<sitemap>`` element of an index; ``loc`` already escaped."""
    if lastmod:
        return f"<sitemap><loc>{loc}</loc><lastmod>{lastmod}</lastmod></sitemap>\n"
    return f"<sitemap><loc>{loc}</loc></sitemap>\n"


def stream_index(entries: Iterable[str]) -> Iterator[bytes]:
    """A ``sitemapindex`` document from pre-rendered ``<sitemap>`` entries."""
    return _batched(_root_open("sitemapindex", {}), entries, "</sitemapindex>\n")


def stream_text(locations: Iterable[str]) -> Iterator[bytes]:
    """A text sitemap: one absolute URL per line, UTF-8, nothing else."""
    return _batched("", (f"{loc}\n" for loc in locations), "")
