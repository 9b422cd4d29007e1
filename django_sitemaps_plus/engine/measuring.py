"""Blocks sized by rendering them, off the request path: a measured
section's blocks are rendered once (``measure_blocks``: ``build_sitemaps``,
``measure_sitemaps``) and kept as pieces under each block's fingerprint, so
only blocks whose rows changed are rendered again; a block not measured yet
is sized by its worst case (``measured_units``). A plain section's items are
measured as they are laid out (``measured_items``). docs/pagination.md.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any, cast

from django.db import models

from django_sitemaps_plus.engine import blocks, pagination, render
from django_sitemaps_plus.engine.bounds import bounded_units
from django_sitemaps_plus.engine.fingerprints import generation_key, signature
from django_sitemaps_plus.engine.reads import BATCH_ROWS
from django_sitemaps_plus.serving import quiet

if TYPE_CHECKING:
    from django.core.cache import BaseCache

    from django_sitemaps_plus.sections import ModelSection, Section
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")


#: (key, URLs, bytes, lastmod text) of one measured row.
Measured = tuple[int, int, int, "str | None"]


def measured_items(section: Section, items: Any, site: SiteContext) -> list[pagination.Span]:
    """A plain section's files: each of ``items`` (what ``items()`` gave)
    rendered once and measured, then packed; an item's key is its position
    (1, 2, ...)."""
    if isinstance(items, models.QuerySet):
        items = items.iterator(chunk_size=BATCH_ROWS)
    iterator = iter(items)

    def measured() -> Iterator[Measured]:
        position = 0
        while batch := list(islice(iterator, BATCH_ROWS)):
            rows = section.plain_rows(batch, [section.lastmod(item) for item in batch], site)
            urls, sizes = render.measure(section, rows, site)
            positions = range(position + 1, position + len(rows) + 1)
            position += len(rows)
            yield from zip(positions, urls, sizes, [row[2] for row in rows])

    # One block: the positions of a list are never laid out again in part.
    units = [unit for _, unit in pagination.pieces(measured(), sys.maxsize)]
    return pack_measured(section, units, sys.maxsize)


def pack_measured(
    section: Section, units: Sequence[pagination.Unit], end_key: int
) -> list[pagination.Span]:
    """A measured section's files (``pagination.pack``). A file holds only
    rows that render: when none does (every ``location()`` failed, each
    logged), the section has rows and no file, and an error says so."""
    spans = pagination.pack(units, section.get_limit(), section.measured_room(), end_key)
    if units and not spans:
        no_url_error(section, "it", "the section")
    return spans


def no_url_error(section: Section, where: str, left_out: str) -> None:
    """The error logged when no item of ``where`` (the section, or some of
    its files) gives a URL, so the index leaves ``left_out`` out."""
    logger.error(
        "Sitemap section %r: no item of %s gives a URL (each location() failed or gave "
        "one that cannot be listed: see the warnings that name them), so the index "
        "leaves %s out.",
        section.get_name(),
        where,
        left_out,
    )


#: Blocks whose measured pieces share one cache entry (a shelf): a
#: 1,000,000-row section is two entries, not a hundred, so a small cache
#: (Django's local memory keeps 300 entries) does not evict them, and an
#: entry stays far below Memcached's 1 MB.
SHELF_BLOCKS = 64


#: What a shelf holds: block → (its fingerprint, its pieces).
Shelf = dict[int, tuple[tuple[Any, ...], list[pagination.Unit]]]


def measured_units(
    section: ModelSection,
    figures: dict[int, blocks.BlockFigures],
    width: int,
    site: SiteContext,
) -> list[pagination.Unit]:
    """Each block's measured pieces, from the cache when its fingerprint
    (rows, key sum, lastmod) is the one they were measured under. A block
    not measured yet, or changed since, is sized by its worst case
    (``worst_entry_bytes()`` per URL, ``bounded_units``): nothing is
    rendered here, on a request's path; ``measure_blocks`` measures, off it."""
    kept = _kept_pieces(section, figures, width, site)
    missing = {block: f for block, f in figures.items() if block not in kept.known}
    if missing:
        # Smaller files than its rows need until a command measures them: say
        # how to get full files, where the site's operator looks.
        logger.info(
            "Sitemap section %r: %s of %s key blocks are not measured yet, so their files "
            "are sized by the worst case (fewer URLs per file); run manage.py "
            "measure_sitemaps (or build_sitemaps) after deploys or from cron to fill "
            "files toward 50,000 URLs.",
            section.get_name(),
            len(missing),
            len(figures),
        )
    worst = section.worst_entry_bytes()
    units = [unit for pieces in kept.known.values() for unit in pieces]
    units += bounded_units(section, missing, width, site, lambda f: worst)
    return sorted(units, key=lambda unit: unit.last_key)


def measure_blocks(section: Section, site: SiteContext) -> int:
    """Render and measure the blocks of a measured ``ModelSection``
    (``file_sizing() == "measure"``) whose pieces the cache does not hold
    under their current fingerprint, and keep them there: the next layout
    packs them by their real bytes. Off the request path (``build_sitemaps``,
    ``measure_sitemaps``). The number of blocks measured (0 for any other
    section, a small one, or with the cache down)."""
    block_figures = getattr(section, "block_figures", None)
    if block_figures is None or section.file_sizing() != "measure":
        return 0
    model_section = cast("ModelSection", section)
    width = model_section.block_width()
    figures: dict[int, blocks.BlockFigures] = block_figures(
        site, width, model_section.last_block(site, width)
    )
    urls = sum(model_section.figure_urls(f) for f in figures.values())
    if not figures or model_section.fits_unmeasured(urls):
        return 0
    kept = _kept_pieces(model_section, figures, width, site)
    if kept.cache is None:
        return 0
    ordered = sorted(figures)
    missing = [block for block in ordered if block not in kept.known]
    measured: dict[int, list[pagination.Unit]] = {block: [] for block in missing}
    for after, last in blocks.runs(missing, ordered, width):
        rows = _measured_rows(model_section, after, last, site)
        for block, unit in pagination.pieces(rows, width):
            measured.setdefault(block, []).append(unit)
    if missing:
        kept.store(measured)
    return len(missing)


@dataclass
class _Kept:
    """What the cache holds of a section's measured blocks."""

    #: None: the cache is down.
    cache: BaseCache | None
    #: Each block's shelf key and fingerprint (rows, key sum, lastmod).
    keys: dict[int, str]
    prints: dict[int, tuple[Any, ...]]
    #: The pieces of the blocks measured under their current fingerprint.
    known: dict[int, list[pagination.Unit]]

    def store(self, measured: dict[int, list[pagination.Unit]]) -> None:
        """Write the shelves that hold a newly ``measured`` block, each with
        the section's current blocks on it (blocks gone since are dropped)."""
        known = {**self.known, **measured}
        shelves: dict[str, Shelf] = {self.keys[b]: {} for b in measured if b in self.keys}
        for block, key in self.keys.items():
            if key in shelves and block in known:
                shelves[key][block] = (self.prints[block], known[block])
        quiet.quietly(None, self.cache, "set_many", shelves, timeout=pagination.PIECES_TIMEOUT)


def _kept_pieces(
    section: ModelSection, figures: dict[int, blocks.BlockFigures], width: int, site: SiteContext
) -> _Kept:
    """The blocks' kept pieces: one ``get_many`` of their shelves."""
    stamp = signature(section, site)

    def shelf_keys(generation: Any) -> dict[int, str]:
        return {
            block: pagination.fingerprint_key(
                "pieces", stamp, generation, width, (block - 1) // SHELF_BLOCKS
            )
            for block in figures
        }

    cache: BaseCache | None = None
    shelves: dict[str, Shelf] = {}
    try:
        cache = quiet.get_cache()
        # Bumped by ``forget_sizes``: every block is measured again.
        keys = shelf_keys(quiet.call(cache, "get", generation_key(section)))
        shelves = quiet.call(cache, "get_many", sorted(set(keys.values())))
    except quiet.CacheDown:
        cache, keys = None, shelf_keys(None)  # every block sized by its worst case
    prints = {block: (f.count, f.key_sum, f.lastmod, f.undated) for block, f in figures.items()}
    known = {}
    for block, key in keys.items():
        held = shelves.get(key, {}).get(block)
        if held is not None and held[0] == prints[block]:
            known[block] = held[1]
    return _Kept(cache, keys, prints, known)


def _measured_rows(
    section: ModelSection, after: int | None, last: int, site: SiteContext
) -> Iterator[Measured]:
    """(key, URLs, bytes, lastmod text) of each row with ``after < key
    <= last``: its entries rendered as for the file, and measured."""
    layout_key = section.layout_key
    for rows in section.range_rows(after, last, site):
        urls, sizes = render.measure(section, rows, site)
        # The fast path's item is its integer key already.
        keys = [row[0] if type(row[0]) is int else layout_key(row) for row in rows]
        yield from zip(keys, urls, sizes, [row[2] for row in rows])
