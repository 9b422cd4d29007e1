"""A model section's block figures, kept in the sitemap cache and read
again only where a change moved them (docs/caching.md, "Kept block
figures", which this module implements; docs/pagination.md).

Reading every block's figures reads every row, so they are kept with the
version tokens they were read under: a moved ``ALL``, ``files_token`` or
layout generation means a full pass; otherwise the block tokens say which
blocks a save touched (``versions.moved_blocks``) and only those, and any
past the last kept block, are read again. Writes that send no signal show
within ``CACHE_RECONCILE`` (a full pass at most that old). Tokens are read
before the rows, so a save during a read is seen by the next one. Figures
are stored on shelves of ``SHELF_BLOCKS`` blocks, so a save rewrites one
shelf. Kept only where tokens follow the rows (``keeps``); otherwise, and
while the cache is down, every index reads every block.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine import blocks, fingerprints, pagination
from django_sitemaps_plus.serving import quiet, versions

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import ModelSection
    from django_sitemaps_plus.sites import SiteContext

#: Where the token every save of a section bumps stands.
TOP: versions.TokenPlace = (versions.BLOCK_LEVELS - 1, 0)
#: What a kept entry holds of a block: a new field of ``BlockFigures`` is a
#: new key, never an old entry read as the new class.
_FORMAT = tuple(field.name for field in dataclasses.fields(blocks.BlockFigures))


#: Blocks one cache entry of figures holds (a shelf): a save writes its
#: block's shelf again, not every block's figures (1,000 blocks at 10^7 rows).
SHELF_BLOCKS = 50
#: Shelves this process read or wrote: (id, figures) by cache key. An id is
#: never reused, so a shelf seen under its id is not read and unpickled again.
_seen: dict[str, tuple[str, dict[int, blocks.BlockFigures]]] = {}
_SEEN_MOST = 1_024  # about 10 MB: 51,200 blocks, 5 x 10^8 keys


@dataclass(frozen=True)
class Kept:
    """What a section's block figures were read under, and where they are."""

    #: ``time.time()`` of the last full pass (``CACHE_RECONCILE`` counts from it).
    read_at: float
    #: ``ALL``, the section's files token and the layout's generation, as read.
    stamp: tuple[Any, ...]
    #: The block tokens read (or made) before the figures, by place; a place
    #: not here was not read (past the last block, above the levels compared).
    tokens: dict[versions.TokenPlace, str]
    #: The last block the figures were read to: past it, every block is read.
    past: int
    #: A new id each time the figures are read or brought up to date: what a
    #: layout packed from them names (``Reading.base``).
    state: str
    #: The id of each shelf of figures (``SHELF_BLOCKS`` blocks), by number:
    #: the ``state`` that last wrote it.
    shelves: dict[int, str]


@dataclass(frozen=True)
class Reading:
    """A section's block figures as ``read`` found them, and what moved."""

    figures: dict[int, blocks.BlockFigures]
    #: The kept figures' id (``Kept.state``); None: not kept.
    state: str | None = None
    #: The kept state they were brought up to date from (None: every block
    #: read), and the figures that state had of each block that differs
    #: now (None: a block it had not).
    base: str | None = None
    before: dict[int, blocks.BlockFigures | None] = dataclasses.field(default_factory=dict)


def keeps(section: ModelSection) -> bool:
    """Whether ``section``'s figures are kept (module docstring)."""
    return (
        conf.CACHE
        and not conf.CACHE_FRESHNESS_CHECK
        and conf.CACHE_RECONCILE != 0
        and not section.changes_with_time
    )


def figures_key(section: ModelSection, site: SiteContext, width: int) -> str:
    """The cache key of the section's kept figures: by the site, the
    language and the section's settings (``fingerprints.signature``), as its layout."""
    return pagination.fingerprint_key(
        "figures", fingerprints.signature(section, site), width, _FORMAT, SHELF_BLOCKS
    )


def read(section: ModelSection, site: SiteContext, width: int) -> Reading:
    """Each non-empty block's figures: the kept ones, read again where a
    save moved them, or all of them read now (none kept, a token of the
    section moved, older than ``CACHE_RECONCILE``); with what moved since
    the kept state they came from, so a layout packed from that state is
    packed again only where they moved (``pagination.repack``)."""
    if not keeps(section):
        return Reading(_every_block(section, site, width, section.last_block(site, width)))
    name = section.get_name()
    key = figures_key(section, site, width)
    # Made when missing (as a file's lookup makes them): a token first made
    # after a full pass would make the next index read every block again.
    names = [
        versions.ALL,
        versions.files_token(name),
        versions.top_token(name, width),
    ]
    generation_key = fingerprints.generation_key(section)
    try:
        cache = quiet.get_cache()
        keys = [key, *versions.token_keys(names), generation_key]
        found = quiet.call(cache, "get_many", keys)
        every, files, top = versions.versions_of(cache, names, found)
        stamp = (every, files, found.get(generation_key))
        held = found.get(key)
        kept_figures = None
        if isinstance(held, Kept) and _current(held, stamp):
            kept_figures = _shelved(cache, key, held)
        if kept_figures is not None:
            if held.tokens.get(TOP) == top:
                return Reading(kept_figures, held.state, held.state)  # nothing saved since
            kept, figures, before = _read_moved(section, site, width, held, kept_figures, top)
            reading = Reading(figures, kept.state, held.state, before)
            written = {_shelf_of(block) for block in before}
        else:
            last = section.last_block(site, width)
            # Every block's token, before the rows.
            tokens = {**versions.moved_blocks(name, width, last, None)[1], TOP: top}
            figures = _every_block(section, site, width, last)
            state = uuid.uuid4().hex
            written = {_shelf_of(block) for block in figures}
            kept = Kept(
                time.time(), stamp, tokens, last, state, dict.fromkeys(sorted(written), state)
            )
            reading = Reading(figures, kept.state)
    except quiet.CacheDown:
        # Logged by the breaker.
        return Reading(_every_block(section, site, width, section.last_block(site, width)))
    entries: dict[str, Any] = {key: kept}
    for shelf in written & kept.shelves.keys():
        shelf_figures = {
            b: reading.figures[b] for b in _shelf_blocks(shelf) if b in reading.figures
        }
        entries[_shelf_key(key, shelf)] = (kept.state, shelf_figures)
    quiet.quietly(None, cache, "set_many", entries, timeout=pagination.PIECES_TIMEOUT)
    _remember({k: v for k, v in entries.items() if k != key})
    return reading


def _every_block(
    section: ModelSection, site: SiteContext, width: int, last: int
) -> dict[int, blocks.BlockFigures]:
    """Every block's figures, in block order (the layout packs them in it;
    SQL does not promise the order of a ``UNION ALL``'s rows)."""
    return dict(sorted(section.block_figures(site, width, last).items()))


def _current(held: Kept, stamp: tuple[Any, ...]) -> bool:
    """Whether ``held`` was read under ``stamp`` and within ``CACHE_RECONCILE``."""
    if held.stamp != stamp:
        return False
    reconcile = conf.CACHE_RECONCILE
    return reconcile is None or time.time() - held.read_at < reconcile


def _read_moved(
    section: ModelSection,
    site: SiteContext,
    width: int,
    held: Kept,
    held_figures: dict[int, blocks.BlockFigures],
    top: str,
) -> tuple[Kept, dict[int, blocks.BlockFigures], dict[int, blocks.BlockFigures | None]]:
    """``held`` with the blocks whose tokens moved, and those past its
    last block, read again (``top``: the top token, read before them): the
    new ``Kept``, the figures, and ``held``'s figures of each block that
    differs now (``Reading.before``)."""
    last = section.last_block(site, width)
    moved, tokens = versions.moved_blocks(section.get_name(), width, last, held.tokens)
    fresh = section.block_figures(site, width, last, moved, held.past)
    figures = dict(held_figures)
    # Read again: the moved blocks and every block past ``held.past``; a
    # block read again that has no row now is gone, as is any past ``last``.
    gone = {b for b in figures if b > last or b in moved or b > held.past} - fresh.keys()
    before: dict[int, blocks.BlockFigures | None] = {b: figures.pop(b) for b in gone}
    for block, found in fresh.items():
        if figures.get(block) != found:
            before[block] = figures.get(block)
            figures[block] = found
    if any(figures_then is None for figures_then in before.values()):
        figures = dict(sorted(figures.items()))  # a block that had no row has some
    state = uuid.uuid4().hex if before else held.state
    shelves = dict(held.shelves)
    for shelf in {_shelf_of(block) for block in before}:
        shelves.pop(shelf, None)
        if any(b in figures for b in _shelf_blocks(shelf)):
            shelves[shelf] = state
    kept = Kept(
        held.read_at,
        held.stamp,
        {**held.tokens, **tokens, TOP: top},
        last,
        state,
        dict(sorted(shelves.items())),
    )
    return kept, figures, before


def _shelf_of(block: int) -> int:
    return (block - 1) // SHELF_BLOCKS


def _shelf_blocks(shelf: int) -> range:
    return range(shelf * SHELF_BLOCKS + 1, (shelf + 1) * SHELF_BLOCKS + 1)


def _shelf_key(key: str, shelf: int) -> str:
    return f"{key}:{shelf}"


def _shelved(cache: Any, key: str, held: Kept) -> dict[int, blocks.BlockFigures] | None:
    """``held``'s figures from its shelves: the ones this process saw under
    their id, the others read from the cache; None when one is missing or
    of another id (evicted, or written by an update of another process since)."""
    shelves: dict[int, dict[int, blocks.BlockFigures]] = {}
    wanted: dict[str, tuple[int, str]] = {}
    for shelf, shelf_id in held.shelves.items():
        seen = _seen.get(_shelf_key(key, shelf))
        if seen is not None and seen[0] == shelf_id:
            shelves[shelf] = seen[1]
        else:
            wanted[_shelf_key(key, shelf)] = (shelf, shelf_id)
    if wanted:
        found = quiet.call(cache, "get_many", list(wanted))
        for shelf_key, (shelf, shelf_id) in wanted.items():
            value = found.get(shelf_key)
            if not (isinstance(value, tuple) and len(value) == 2 and value[0] == shelf_id):
                return None
            shelves[shelf] = value[1]
        _remember({k: found[k] for k in wanted})
    figures: dict[int, blocks.BlockFigures] = {}
    for shelf in sorted(shelves):
        figures.update(shelves[shelf])
    return figures


def _remember(shelves: dict[str, tuple[str, dict[int, blocks.BlockFigures]]]) -> None:
    if len(_seen) + len(shelves) > _SEEN_MOST:
        _seen.clear()
    _seen.update(shelves)
