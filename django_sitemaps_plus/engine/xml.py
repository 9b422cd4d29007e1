"""Streaming writers for ``urlset``, ``sitemapindex`` and text sitemaps.

Entries are rendered as ``str`` one URL at a time and sent in batches of
encoded bytes, so memory stays flat whatever the page size. Children follow the
XSD sequence: loc, lastmod, changefreq, priority, then extension elements.
The root declares only the namespaces the file uses.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import NamedTuple

from django_sitemaps_plus import protocol

logger = logging.getLogger("django_sitemaps_plus")

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
#: Entries joined into one chunk of the streamed response.
BATCH_SIZE = 1_000
#: Entries sent with the document's head: the first byte leaves early.
FIRST_BATCH_SIZE = 50

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})

#: Characters XML 1.0 forbids in a document (its ``Char`` production): C0
#: controls other than tab, line feed and carriage return, lone surrogates,
#: U+FFFE and U+FFFF. Escaping cannot help (``&#11;`` is ill-formed too), so
#: they are removed.
FORBIDDEN_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass
class RemovedCharacters:
    """What ``escape`` removed while one document was written."""

    label: str
    values: int = 0
    characters: int = 0
    first: str = ""
    codepoints: set[str] = field(default_factory=set)

    def add(self, value: str, found: list[str]) -> None:
        self.values += 1
        self.characters += len(found)
        self.codepoints.update(f"U+{ord(c):04X}" for c in found)
        if not self.first:
            self.first = value[:60]

    def log(self) -> None:
        if self.values:
            logger.warning(
                "%s: removed %d character(s) that XML 1.0 forbids (%s) from %d value(s), "
                "first %r; the entries are kept.",
                self.label,
                self.characters,
                ", ".join(sorted(self.codepoints)),
                self.values,
                self.first,
            )


class _Collecting(threading.local):
    """The collector of the document whose entries this thread is rendering.
    Thread-local, not a ``ContextVar``: asgiref copies a worker thread's
    context variables back to the awaiting coroutine when a ``sync_to_async``
    call is cancelled, even while the thread is still inside a pull. A
    context variable set there would outlive its document in the event loop's
    context, and every later removal would be counted into it, never logged.
    A pull runs on one thread from start to end, which a thread-local follows.
    """

    removed: RemovedCharacters | None = None


_collecting = _Collecting()


def escape(value: str) -> str:
    """``value`` as XML character data or an attribute value.
    The one path every text node and attribute of every writer takes: the five
    special characters are escaped (protocol §1: entity escaping) and the
    characters XML 1.0 forbids are removed, so no model text can make a file
    ill-formed. Removals are logged once per document (see ``_batched``).
    """
    # isascii() and isprintable() run at C speed: most values skip the regex.
    if not (value.isascii() and value.isprintable()):
        found = FORBIDDEN_CHARS.findall(value)
        if found:
            removed = _collecting.removed
            if removed is None:
                removed = RemovedCharacters("Sitemap")
                removed.add(value, found)
                removed.log()
            else:
                removed.add(value, found)
            value = FORBIDDEN_CHARS.sub("", value)
    if "&" in value or "<" in value or ">" in value or '"' in value or "'" in value:
        return value.translate(_ESCAPES)
    return value


def byte_length(value: str) -> int:
    """UTF-8 length of ``value``; cheap for the ASCII text of most entries."""
    return len(value) if value.isascii() else len(value.encode())


#: Bytes budgeted for the ``<?xml-stylesheet?>`` line, whatever its href.
STYLESHEET_BYTES = len('<?xml-stylesheet type="text/xsl" href=""?>\n') + protocol.MAX_LOC_LENGTH


def stylesheet_instruction(href: str | None) -> str:
    """The processing instruction naming the XSL stylesheet (``""`` for none)."""
    if not href:
        return ""
    return f'<?xml-stylesheet type="text/xsl" href="{escape(href)}"?>\n'


def root_open(root: str, namespaces: Mapping[str, str], stylesheet: str | None = None) -> str:
    """A document's head: the declaration, the stylesheet line, the root's opening tag."""
    declarations = "".join(f' xmlns:{prefix}="{uri}"' for prefix, uri in sorted(namespaces.items()))
    return (
        f"{XML_DECLARATION}{stylesheet_instruction(stylesheet)}"
        f'<{root} xmlns="{protocol.SITEMAP_NS}"{declarations}>\n'
    )


def urlset_envelope_bytes(namespaces: Mapping[str, str]) -> int:
    """Bytes of a urlset's declaration, stylesheet line, opening and closing tags."""
    return byte_length(root_open("urlset", namespaces)) + STYLESHEET_BYTES + len("</urlset>\n")


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


def _batched(
    head: str, entries: Iterable[str], tail: str, label: str = "Sitemap"
) -> Iterator[bytes]:
    # islice and join take each batch at C speed, not an append per entry.
    # Entries are rendered lazily, inside each islice: the collector of removed
    # characters is set around each pull only, never across a yield.
    iterator = iter(entries)
    removed = RemovedCharacters(label)

    def pull(size: int) -> list[str]:
        outer = _collecting.removed
        _collecting.removed = removed
        try:
            return list(islice(iterator, size))
        finally:
            _collecting.removed = outer

    try:
        # The head leaves with the first few entries, so a streamed file's
        # first byte does not wait for a whole batch; then a batch a chunk.
        batch = pull(FIRST_BATCH_SIZE)
        yield (head + "".join(batch)).encode()
        while batch:
            batch = pull(BATCH_SIZE)
            if batch:
                yield "".join(batch).encode()
        if tail:
            yield tail.encode()
    finally:
        removed.log()


def stream_urlset(
    entries: Iterable[str],
    namespaces: Mapping[str, str],
    label: str = "Sitemap",
    stylesheet: str | None = None,
) -> Iterator[bytes]:
    """A ``urlset`` document from ``<url>`` entries rendered as it is read.
    ``label`` names the document in the log line about removed characters
    (``"Sitemap section 'articles'"``).
    """
    return _batched(root_open("urlset", namespaces, stylesheet), entries, "</urlset>\n", label)


class IndexedFile(NamedTuple):
    """One file an index lists."""

    #: Its absolute URL (escaped when written).
    loc: str
    #: Its lastmod as W3C text, or None.
    lastmod: str | None
    #: Its URL count, for the styled view; None when not known.
    urls: int | None = None


def _sitemap_entry(file: IndexedFile, styled: bool) -> str:
    """One ``<sitemap>`` element of an index.
    A styled index carries each file's URL count in a comment
    (``stylesheet.py`` shows it): comments are not part of the protocol's
    content model, so the index stays valid against sitemap.xsd, and crawlers
    skip them.
    """
    loc = escape(file.loc)
    count = "" if not styled or file.urls is None else f"<!-- urls: {int(file.urls)} -->"
    if file.lastmod:
        return f"<sitemap><loc>{loc}</loc><lastmod>{file.lastmod}</lastmod>{count}</sitemap>\n"
    return f"<sitemap><loc>{loc}</loc>{count}</sitemap>\n"


def stream_index(files: Iterable[IndexedFile], stylesheet: str | None = None) -> Iterator[bytes]:
    """A ``sitemapindex`` document listing ``files``: the one writer of every
    index (the served one, a build's, a build's interim one, a URL list's)."""
    styled = stylesheet is not None
    entries = (_sitemap_entry(file, styled) for file in files)
    return _batched(root_open("sitemapindex", {}, stylesheet), entries, "</sitemapindex>\n")


def stream_text(locations: Iterable[str]) -> Iterator[bytes]:
    """A text sitemap: one absolute URL per line, UTF-8, nothing else."""
    return _batched("", (f"{loc}\n" for loc in locations), "")
