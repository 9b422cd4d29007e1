"""The render loop: a section's rows turned into ``<url>`` entries.

A row (``Row``) is what a section read for one item: the item, its absolute
URL, its lastmod text, and on ``ModelSection``'s fast path the URL kwarg
values. ``entries`` writes a batch of rows as the file holds them and
``measure`` gives each row's URLs and bytes, for the layout
(pagination.py). Every entry goes through ``EntryWriter``, so a dropped one
is always logged the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine import xml

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext

#: One item of a page as the engine renders it: the item (a primary key on
#: ModelSection's fast path), its absolute URL (None: not listable), its
#: lastmod text, and on the fast path the URL kwarg values of its row.
Row = tuple[Any, "str | None", "str | None", "tuple[Any, ...] | None"]

#: Bytes of a ``<url>`` entry besides its loc's text: the tags around loc, a
#: full UTC datetime lastmod, the longest changefreq and priority "0.0"-"1.0".
URL_TAGS_BYTES = len(
    xml.url_entry("", "2000-01-01T00:00:00Z", "monthly", "0." + "5" * protocol.PRIORITY_PLACES)
)


#: The characters a loc escapes.
_XML_SPECIALS = "&<>\"'"


class EntryWriter:
    """Writes a section's ``<url>`` entries with one changefreq and priority.
    The limits and the fixed text after lastmod are computed once, so a
    batch of rows costs one f-string and two length checks per entry. Every
    rendering path goes through ``write`` (or, for a clean batch,
    ``write_clean_batch``), so a dropped entry is always logged the same way.
    """

    __slots__ = ("max_length", "meta", "section", "tail")

    def __init__(
        self,
        section: Section,
        changefreq: str | None,
        priority: float | Decimal | str | None,
    ) -> None:
        self.section = section
        self.max_length = section.get_max_loc_length()
        #: changefreq and priority, in the XSD order after lastmod.
        self.meta = xml.url_entry(
            "",
            None,
            changefreq,
            protocol.format_priority(priority),
        ).removeprefix("<url><loc></loc>")[: -len("</url>\n")]
        self.tail = self.meta + "</url>\n"

    def write(
        self, item: Any, url: str | None, lastmod: str | None, children: str = ""
    ) -> str | None:
        """The entry, or None (logged) when ``item`` may not be listed."""
        if url is None:
            return None
        if len(url) > self.max_length:
            self.section.drop_item(item, f"is longer than {self.max_length:,} characters")
            return None
        head = f"<lastmod>{lastmod}</lastmod>{self.meta}" if lastmod else self.meta
        # However long once escaped, a legal entry is written: files are
        # sized from their entries' real bytes (pagination.py).
        return f"<url><loc>{xml.escape(url)}</loc>{head}{children}</url>\n"

    def write_clean_batch(self, rows: Sequence[Row]) -> list[str] | None:
        """All entries of a batch at once, or None when it is not clean.

        Clean: every row has a URL and a lastmod, no URL escapes or is
        non-ASCII (checked on the joined batch, at C speed), and the longest
        URL is within the length limit. Then each entry is what ``write``
        gives, and none is dropped.
        """
        # Checked below to hold no None before being used as str.
        urls = cast("list[str]", [row[1] for row in rows])
        lastmods = cast("list[str]", [row[2] for row in rows])
        if not lastmods or None in urls or not all(lastmods):
            return None
        if max(map(len, urls)) > self.max_length:
            return None
        joined = "".join(urls)
        if not joined.isascii() or any(c in joined for c in _XML_SPECIALS):
            return None
        tail = self.tail
        return [
            f"<url><loc>{url}</loc><lastmod>{lastmod}</lastmod>{tail}"
            for url, lastmod in zip(urls, lastmods)
        ]


def renders_plain(section: Section) -> bool:
    """No extensions, and changefreq/priority the same for every item: a
    batch is written by one writer, at once when it is clean."""
    return not section.extensions and not section.varies_per_item


def writers(section: Section) -> Callable[[Any], EntryWriter]:
    """The writer of each item: one for all, unless changefreq/priority vary per item."""
    if not section.varies_per_item:
        shared = EntryWriter(section, section.changefreq, section.priority)
        return lambda item: shared
    return lambda item: EntryWriter(
        section, section.get_changefreq(item), section.get_priority(item)
    )


def entries(section: Section, rows: Sequence[Row], site: SiteContext) -> list[str]:
    """The ``<url>`` entries of a batch of rows, extension data fetched once."""
    return [entry for batch in entry_batches(section, rows, site) for entry in batch]


#: Entries a list of ``entry_batches`` holds at most (about: an item's
#: versions stay together). A row of a section with five languages gives
#: five entries: a batch of 2,000 such rows held whole was 6 MB of them.
BATCH_ENTRIES = 2_000


def entry_batches(section: Section, rows: Sequence[Row], site: SiteContext) -> Iterator[list[str]]:
    """The ``<url>`` entries of a batch of rows, in lists of about
    ``BATCH_ENTRIES``; extension data fetched once for all the rows."""
    if renders_plain(section):
        yield _plain(section, rows)
        return
    batch: list[str] = []
    for written in _extended(section, rows, site):
        batch += written
        if len(batch) >= BATCH_ENTRIES:
            yield batch
            batch = []
    if batch:
        yield batch


def measure(
    section: Section, rows: Sequence[Row], site: SiteContext
) -> tuple[list[int], list[int]]:
    """Each row's URLs and bytes, as ``entries`` writes them (none for a
    row that may not be listed): what the layout measures."""
    if renders_plain(section):
        entries = _plain_entries(section, rows)
        return [int(e is not None) for e in entries], [xml.byte_length(e or "") for e in entries]
    written = list(_extended(section, rows, site))
    return [len(each) for each in written], [sum(map(xml.byte_length, each)) for each in written]


def listed_urls(section: Section, rows: Sequence[Row]) -> Iterator[str]:
    """The URLs of the rows whose entries ``entries`` would write (the same
    checks), for the text sitemap; no extension data is fetched."""
    writer = writers(section)
    for item, url, lastmod, _values in rows:
        if url is not None and writer(item).write(item, url, lastmod) is not None:
            yield url


def _plain(section: Section, rows: Sequence[Row]) -> list[str]:
    """``entries`` for a plain section: one writer for the whole batch."""
    return list(filter(None, _plain_entries(section, rows)))


def _plain_entries(section: Section, rows: Sequence[Row]) -> Sequence[str | None]:
    """Each row's entry in a plain section (None: not listed), a clean
    batch at once."""
    writer = EntryWriter(section, section.changefreq, section.priority)
    clean = writer.write_clean_batch(rows)
    if clean is not None:
        return clean
    return [writer.write(item, url, lastmod) for item, url, lastmod, _ in rows]


def _extended(section: Section, rows: Sequence[Row], site: SiteContext) -> Iterator[list[str]]:
    """Each row's entries when extensions write children or the
    changefreq/priority vary per item.

    Each extension's ``children`` are written in every entry of the item;
    an extension that gives an item several entries (``gives_versions``, as
    hreflang does) replaces the item's one location with them.
    """
    extensions = section.extensions
    fetched = [ext.fetch(section, [row[0] for row in rows]) for ext in extensions]
    versioned = [ext for ext in extensions if ext.gives_versions]
    locators = section.locators(rows) if versioned else []
    writer_of = writers(section)
    for position, (item, url, lastmod, _values) in enumerate(rows):
        children = ""
        versions: Sequence[tuple[str, str]] | None = None
        for ext, data in zip(extensions, fetched):
            children += ext.children(section, item, data[position], site)
            if versions is None and ext in versioned:
                versions = ext.versions(section, item, data[position], site, locators[position])
        if versions is None:
            versions = () if url is None else ((url, ""),)
        writer = writer_of(item)
        written = []
        for version_url, version_children in versions:
            entry = writer.write(item, version_url, lastmod, version_children + children)
            if entry is not None:
                written.append(entry)
        yield written
