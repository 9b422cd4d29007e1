"""How a section's rows are laid out in files, from their real sizes
(docs/pagination.md, which this module implements).

Rows in key order are cut into aligned key **blocks** of at most a fifth of
a file; blocks (or a measured block's **pieces**) are the units, packed
greedily into files within the URL limit and the byte room (``pack``;
``repack`` again only around the units a save moved). As no unit holds more
than a fifth of a file, every file but the last is four fifths full at
least. A unit's bytes are not counted, bounded from SQL or measured
(``file_sizing()``: ``bounds``, ``measuring``). Each file is a key range
numbered in key order, and ``FileGuard`` keeps it within the limits even
when the layout could not see a change.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.engine.blocks import block_of
from django_sitemaps_plus.engine.lastmod import LastmodValue, file_lastmod, latest, to_utc

logger = logging.getLogger("django_sitemaps_plus")


#: A unit holds at most this share of a file, so packing whole units fills
#: every file but the last to four fifths at least.
UNIT_SHARE: Final = 5
#: URLs per key block at most: a fifth of a full file.
BLOCK_URLS: Final = protocol.MAX_URLS_PER_FILE // UNIT_SHARE
#: A measured block is kept as pieces of at most this many URLs...
PIECE_URLS: Final = 1_000
#: ...or a fiftieth of a file's bytes (``piece_bytes()``); one entry larger
#: than that is a piece of its own.
PIECE_SHARE: Final = 50
#: Measured files are packed to this share of the byte room, leaving room
#: for changes a block's fingerprint does not see.
MEASURED_FILL: Final = 0.95
#: Bumped when what a piece holds changes, so old pieces are not read.
LAYOUT_FORMAT: Final = 2
#: How long a measured block is kept (its fingerprint keeps it exact).
PIECES_TIMEOUT: Final = 7 * 24 * 3600
#: The bytes one character of text (a location, a news title) can take once
#: written (the one home of this rule; ``Section.loc_budget``): '"' and "'"
#: are escaped as six characters (``&quot;``); a non-ASCII character is at
#: most four bytes of UTF-8.
WORST_BYTES_PER_CHARACTER: Final = 6


@dataclass(frozen=True)
class Unit:
    """A run of rows that is never split between files: a block or a piece."""

    #: The largest key of the run (a block's: the end of its range).
    last_key: int
    urls: int
    #: Their entries' bytes, measured or at most (bounded); 0 when proven
    #: small (sized by count).
    size: int
    lastmod: LastmodValue
    #: Whether any of its URLs has no lastmod.
    undated: bool
    #: Whether ``urls`` counts rendered entries (a measured piece), not rows.
    rendered: bool = False


@dataclass(frozen=True)
class Span:
    """One file: the rows with ``after < key <= last`` (``after`` None: no
    lower bound), its URL count and lastmod (None when any URL has none)."""

    number: int
    after: int | None
    last: int
    urls: int
    lastmod: LastmodValue
    #: The bytes of its entries, measured or at most (bounded); None when
    #: sized by count.
    size: int | None = None
    #: Whether ``urls`` counts rendered entries (every unit was measured).
    rendered: bool = False


def pack(
    units: Iterable[Unit], max_urls: int, room: int, end_key: int, *, measured: bool = True
) -> list[Span]:
    """Files of consecutive ``units``, greedily: each as full as the next
    unit allows, within ``max_urls`` URLs and ``room`` bytes (``measured``
    False: the units' sizes are not known, and only their URLs count).

    The last file ends at ``end_key`` (its block's end), so rows added to
    that block later still belong to it. Units of no URL (rows that render
    nothing) join whichever file they fall in; a section of none has no file.
    """
    return list(_packed(units, max_urls, room, end_key, measured, None, 1))


def _packed(
    units: Iterable[Unit],
    max_urls: int,
    room: int,
    end_key: int,
    measured: bool,
    after: int | None,
    number: int,
) -> Iterator[Span]:
    """``pack``'s files one by one, from the file ``number`` that starts
    after key ``after``: a file is yielded once the unit after it is read."""
    urls = size = 0
    lastmods: list[LastmodValue] = []
    undated = False
    rendered = measured
    last = end_key
    for unit in units:
        if urls and (urls + unit.urls > max_urls or (measured and size + unit.size > room)):
            lastmod = file_lastmod(latest(lastmods), undated)
            yield Span(number, after, last, urls, lastmod, _known(size, measured), rendered)
            number += 1
            after, urls, size, lastmods, undated, rendered = last, 0, 0, [], False, measured
        urls += unit.urls
        size += unit.size
        lastmods.append(unit.lastmod)
        undated = undated or unit.undated
        rendered = rendered and unit.rendered
        last = unit.last_key
    if urls:
        lastmod = file_lastmod(latest(lastmods), undated)
        end = max(last, end_key)
        yield Span(number, after, end, urls, lastmod, _known(size, measured), rendered)


def repack(
    previous: Sequence[Span],
    units_after: Callable[[int | None], Iterable[Unit]],
    changed: Iterable[int],
    max_urls: int,
    room: int,
    end_key: int,
    *,
    measured: bool = True,
) -> list[Span]:
    """What ``pack`` makes of the units now, from ``previous``, what it made
    of them before the units ending at the keys ``changed`` were added,
    removed or changed: packed again only from the file before the one
    holding a change until a file ends where one of ``previous`` ended, past which the files
    are ``previous``' own (renumbered). Greedy packing from a file's start
    depends on the units after it only, so the files are ``pack``'s, at the
    cost of the files around the changes, not of the section.
    ``units_after(key)``: the units whose last key is past ``key``, in order.
    """
    pending = sorted(changed)
    if not previous:
        return pack(units_after(None), max_urls, room, end_key, measured=measured)
    ends = {span.last: index for index, span in enumerate(previous)}
    spans: list[Span] = []
    index = change = 0
    while change < len(pending):
        # Packed again from the file before the one holding the change (it
        # ended where the unit after it did not fit: that unit may have
        # moved); the last file takes in what comes after it.
        while index < len(previous) - 1 and previous[index + 1].last < pending[change]:
            spans.append(_renumbered(previous[index], len(spans) + 1))
            index += 1
        after = previous[index].after
        units = units_after(after)
        index = len(previous)  # packed to the end, unless a file ends as one did
        copied = len(spans)
        for span in _packed(units, max_urls, room, end_key, measured, after, copied + 1):
            spans.append(span)
            while change < len(pending) and pending[change] <= span.last:
                change += 1
            ended = ends.get(span.last)
            # Ending as file ``ended`` did: the files after it are kept, up to
            # the one before the next change (packing on is cheaper when none is).
            if (
                ended is not None
                and ended < len(previous) - 1
                and (
                    change == len(pending)
                    or (ended + 2 < len(previous) and previous[ended + 2].last < pending[change])
                )
            ):
                index = ended + 1
                break
        else:
            if copied and len(spans) == copied:
                # No URL left past the files kept: the last of them ends
                # the section now (at ``end_key``), as ``pack`` would make it.
                return pack(units_after(None), max_urls, room, end_key, measured=measured)
            return spans
    spans.extend(_renumbered(span, len(spans) + 1) for span in previous[index:])
    return spans


def _renumbered(span: Span, number: int) -> Span:
    return span if span.number == number else replace(span, number=number)


def _known(size: int, measured: bool) -> int | None:
    return size if measured else None


def pieces(
    rows: Iterable[tuple[int, int, int, str | None]], width: int
) -> Iterator[tuple[int, Unit]]:
    """Measured rows (key, URLs, bytes, lastmod text) as (block, piece), for
    blocks ``width`` keys wide (keys at or below ``width``, 0 and negative
    ones too, are block 1).

    A piece never spans two blocks, and holds at most ``PIECE_URLS`` URLs
    or a ``PIECE_SHARE``-th of a file's bytes (a larger single row is a piece
    of its own).
    """
    piece_bytes = protocol.MAX_FILE_BYTES // PIECE_SHARE
    block = None
    last_key = urls = size = 0
    newest: str | None = None
    undated = False
    for key, row_urls, row_bytes, lastmod in rows:
        row_block = block_of(key, width)
        # Rows of one key (a page's several URLs) stay in one piece.
        if (
            block is not None
            and key != last_key
            and (
                row_block != block or urls + row_urls > PIECE_URLS or size + row_bytes > piece_bytes
            )
        ):
            yield block, Unit(last_key, urls, size, to_utc(newest), undated, rendered=True)
            urls = size = 0
            newest, undated = None, False
        block = row_block
        last_key = key
        urls += row_urls
        size += row_bytes
        if lastmod is None:
            undated = undated or row_urls > 0
        elif newest is None or lastmod > newest:
            # W3C text of one section has one format: text order is time order.
            newest = lastmod
    if block is not None:
        yield block, Unit(last_key, urls, size, to_utc(newest), undated, rendered=True)


def fingerprint_key(*parts: object) -> str:
    """A cache key for a measured block from what its pieces depend on."""
    stamp = "\n".join(str(part) for part in (LAYOUT_FORMAT, *parts))
    return f"sitemaps_plus:pieces:{hashlib.sha256(stamp.encode()).hexdigest()[:40]}"


def room(namespaces: dict[str, str]) -> int:
    """Bytes a file's ``<url>`` entries may take: the byte limit less the
    envelope (declaration, stylesheet line, root tags)."""
    return protocol.MAX_FILE_BYTES - xml.urlset_envelope_bytes(namespaces)


class FileGuard:
    """Keeps a file within the protocol's limits while it is written.
    A section's layout sizes every file from its rows' measured or bounded
    sizes, so this never cuts a file that the layout made; it is there for what the
    layout could not see (rows added without a save signal, a URL that grew
    with no lastmod change): the file ends before the entry that would take
    it past 50,000 URLs or its byte room, and the cut is logged as an error
    once. Counted per batch of entries, at C speed.
    """

    __slots__ = ("full", "name", "number", "on_full", "room", "size", "urls")

    def __init__(
        self, name: str, number: int, room: int, on_full: Callable[[], None] | None = None
    ) -> None:
        self.name, self.number, self.room = name, number, room
        #: Called once when the file is cut: the layout's sizes are stale.
        self.on_full = on_full
        self.urls = self.size = 0
        self.full = False

    def admit(self, entries: list[str]) -> list[str]:
        """``entries``, or the ones that fit (and ``full`` set)."""
        urls = self.urls + len(entries)
        size = self.size + sum(map(len, entries))
        # Characters undercount bytes only for non-ASCII text.
        if (
            urls <= protocol.MAX_URLS_PER_FILE
            and size <= self.room
            and all(map(str.isascii, entries))
        ):
            self.urls, self.size = urls, size
            return entries
        kept = []
        for entry in entries:
            entry_size = len(entry) if entry.isascii() else len(entry.encode())
            if self.urls + 1 > protocol.MAX_URLS_PER_FILE or self.size + entry_size > self.room:
                self.full = True
                logger.error(
                    "Sitemap section %r: file %s reached the protocol's limits (%s URLs, "
                    "%s bytes) before its last row (its rows grew since the files were "
                    "laid out); the rest are left out until the next index lays the "
                    "section out again.",
                    self.name,
                    self.number,
                    f"{protocol.MAX_URLS_PER_FILE:,}",
                    f"{protocol.MAX_FILE_BYTES:,}",
                )
                if self.on_full is not None:
                    self.on_full()
                break
            self.urls += 1
            self.size += entry_size
            kept.append(entry)
        return kept


def guarded(entries: Iterable[list[str]], guard: FileGuard) -> Iterator[str]:
    """The entries of each batch that the guard admits, until it is full."""
    for batch in entries:
        yield from guard.admit(batch)
        if guard.full:
            return
