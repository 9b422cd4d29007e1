"""A section's layout, made and kept: which rows each of its files holds.

``pagination`` packs units into files; this module gives it the units and
keeps what it made. Units are sized by a bound from SQL (``bounded_units``,
for locations that are a pattern of fields) or by measured pieces
(``measured_units``), which only ``measure_blocks`` renders, off the
request path. The layout the index computes last is kept in the cache
(``remembered``), so a file is always the one the crawler's index listed;
a measured block's pieces are kept under its fingerprint, so only blocks
whose rows changed are rendered again; and when a file outgrew its layout
(``pagination.FileGuard``), ``forget_sizes`` drops both. Both are kept
whatever ``CACHE`` says (that setting is about the files): without them
measured sections stay sized by their worst case. docs/pagination.md.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import logging
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any, cast

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine import blocks, bounds, fingerprints, measuring, pagination
from django_sitemaps_plus.serving import cache as sitemap_cache
from django_sitemaps_plus.serving import quiet, versions

if TYPE_CHECKING:
    from django.core.cache import BaseCache

    from django_sitemaps_plus.engine import kept_figures
    from django_sitemaps_plus.sections import ModelSection, Section
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")


@dataclass(frozen=True)
class Laid:
    """A section's files, as ``Section.compute_layout`` made them, and what
    it needs to make them again from them (``pagination.repack``)."""

    spans: list[pagination.Span]
    #: The kept block figures the files were packed from, one block a unit
    #: (``kept_figures.Reading.state``); None: not to be packed again in part.
    source: str | None = None
    #: The URLs of those blocks, and how they were sized (``file_sizing``).
    urls: int = 0
    sizing: str = ""


def current(section: Section, site: SiteContext, refresh: bool = False) -> list[pagination.Span]:
    """The files of a section: the layout the index computed last
    (``refresh``: compute it now), kept in the cache until a save."""
    return remembered(section, site, refresh)[0]


def remembered(
    section: Section, site: SiteContext, refresh: bool = False
) -> tuple[list[pagination.Span], bool]:
    """The layout the index computed last, and whether its figures (each
    file's URLs and lastmod) are current: computed just now (none kept, or
    ``refresh``, as the index asks), or kept with the section's version
    tokens that are still current (no save since; ``CACHE`` on, without
    ``CACHE_FRESHNESS_CHECK``). A file then needs no query for its
    ``Last-Modified``.

    Kept under the site and the section's settings, not its version: a file
    is always the one the latest index listed. Computed from the one kept
    (``compute_layout``'s ``previous``), packed again only where blocks moved.
    """
    key = _layout_key(fingerprints.signature(section, site))
    versioned = conf.CACHE and not conf.CACHE_FRESHNESS_CHECK
    cache: BaseCache | None = None
    stamp: str | None = None
    held: Any = None
    try:
        cache = quiet.get_cache()
        version_keys = versions.version_keys([section]) if versioned else []
        found = quiet.call(cache, "get_many", [key, _ranges_key(key), *version_keys])
        if versioned:
            # Read before the layout is computed: a save during it leaves
            # the layout kept with an older stamp, so it is not taken as current.
            stamp = versions.version_stamp(cache, [section], found)
        held = found.get(key)
    except quiet.CacheDown:
        cache = None  # laid out anew
    previous = held[0] if isinstance(held, tuple) and len(held) == 2 else None
    if not isinstance(previous, Laid):
        previous = None
    elif not refresh:
        if cache is not None and _ranges_key(key) not in found:
            _keep(cache, {_ranges_key(key): _ranges(previous.spans)})  # evicted alone
        return previous.spans, stamp is not None and held[1] == stamp
    laid = section.compute_layout(site, previous)
    if cache is not None:
        # Beside it, each file's key range alone: what a cached file's
        # lookup reads (``file_scope``), a few bytes per file.
        _keep(cache, {key: (laid, stamp), _ranges_key(key): _ranges(laid.spans)})
    return laid.spans, True


def _ranges(spans: Sequence[pagination.Span]) -> tuple[tuple[int | None, int], ...]:
    return tuple((span.after, span.last) for span in spans)


def _keep(cache: BaseCache, entries: dict[str, Any]) -> None:
    quiet.quietly(None, cache, "set_many", entries, timeout=pagination.PIECES_TIMEOUT)


def numbered(spans: Sequence[pagination.Span], number: int) -> pagination.Span | None:
    """The file ``number`` of a layout, if it has one."""
    if 1 <= number <= len(spans) and spans[number - 1].number == number:
        return spans[number - 1]
    return None


def file_span(
    section: Section, number: int, site: SiteContext
) -> tuple[pagination.Span | None, bool]:
    """File ``number`` of the kept layout, and whether its figures are
    current (``remembered``). A number a kept layout that is not current
    lacks is looked up again in a new one: rows may have come since it was
    kept (an empty section's first)."""
    spans, fresh = remembered(section, site)
    span = numbered(spans, number)
    if span is None and not fresh:
        spans, fresh = remembered(section, site, refresh=True)
        span = numbered(spans, number)
    return span, fresh


def file_scope(
    section: ModelSection,
    number: int,
    site: SiteContext,
    found: Callable[[], pagination.Span | None],
) -> sitemap_cache.BlockScope:
    """What file ``number`` of a model section is cached by (``cache.BlockScope``):
    the section's settings, the file's key range in the kept layout and the
    tokens of the key blocks in that range, so a save re-renders the file
    holding its row and no other (docs/caching.md). ``found``: the file's
    span when no layout is kept (what the view's ``page_info`` reads, once)."""
    name = section.get_name()
    stamp = fingerprints.signature(section, site, name)

    def span_of(held: Any) -> tuple[int | None, int] | None:
        if not isinstance(held, tuple) or not 1 <= number <= len(held):
            return None
        return cast("tuple[int | None, int]", held[number - 1])

    def compute() -> tuple[int | None, int] | None:
        span = found()
        return None if span is None else (span.after, span.last)

    return sitemap_cache.BlockScope(
        name,
        section.block_width(),
        hashlib.sha256(stamp.encode()).hexdigest()[:32],
        _ranges_key(_layout_key(stamp)),
        span_of,
        compute,
    )


def file_fingerprint(
    section: ModelSection,
    span: pagination.Span,
    site: SiteContext,
    *context: object,
    kept: Mapping[int, blocks.BlockFigures] | None = None,
) -> str | None:
    """What a built file of ``span`` is kept by (``build``): the section's
    settings, ``context`` (the stylesheet), the file's key range and its rows'
    figures (count, key sum, lastmod: ``span_figures``) and the version
    tokens a cached file of that range shows (a save's block,
    ``invalidate()``), so an edit no figure sees (a slug) moves it too. With
    a cache the build does not share with the site (a local-memory one),
    those tokens are new in every build process: every file is rendered, as
    without fingerprints. None, so the file is rendered, with ``CACHE`` off
    (saves bump no token then) or the cache down."""
    if not conf.CACHE:
        return None
    name = section.get_name()
    tokens = [
        versions.ALL,
        versions.files_token(name),
        *versions.range_tokens(name, section.block_width(), span.after, span.last),
    ]
    try:
        current = versions.current_tokens(tokens)
    except quiet.CacheDown:
        return None  # logged by the breaker when it opened
    figures = span_figures(section, span, site, kept)
    text = repr(
        (fingerprints.signature(section, site), context, span.after, span.last, figures, current)
    )
    return hashlib.sha256(text.encode()).hexdigest()


def span_figures(
    section: ModelSection,
    span: pagination.Span,
    site: SiteContext,
    kept: Mapping[int, blocks.BlockFigures] | None,
) -> blocks.BlockFigures | None:
    """The figures of a file's rows (count, key sum, lastmod; None: no row):
    summed from ``kept``, the section's current block figures
    (``kept_figures``), when the file's edges are block edges, with no row
    read; else one range aggregate per lastmod group (a block a bound split,
    figures not kept). A build's fingerprints then cost no pass over the rows."""
    width = section.block_width()
    # Block 1 also holds the keys at or below 0: only a first file starts at its edge.
    start = 0 if span.after is None else span.after
    on_edges = (span.after is None or start > 0) and start % width == span.last % width == 0
    if kept is None or not on_edges:
        return section.range_figures(site, span.after, span.last, key_sum=True)
    inside = range(start // width + 1, span.last // width + 1)
    return blocks.combined([kept[block] for block in inside if block in kept])


def forget_sizes(section: Section, site: SiteContext) -> None:
    """A file outgrew the sizes its layout was made from (rows changed
    with no save signal and no lastmod change): drop the kept layout and
    every measured block of the section, so the next index lays it out
    anew (bounded from the rows as they are now, or by the worst case until
    its blocks are measured again)."""
    with contextlib.suppress(quiet.CacheDown):
        cache = quiet.get_cache()
        key = _layout_key(fingerprints.signature(section, site))
        quiet.call(cache, "delete_many", [key, _ranges_key(key)])
        quiet.call(
            cache, "set", fingerprints.generation_key(section), uuid.uuid4().hex, timeout=None
        )


def _layout_key(stamp: str) -> str:
    """The cache key of the layout kept under ``signature`` ``stamp``."""
    return pagination.fingerprint_key("layout", stamp)


def _ranges_key(layout_key: str) -> str:
    """The cache key of the kept layout's file key ranges."""
    return f"{layout_key}:ranges"


def lay_out_blocks(
    section: ModelSection,
    site: SiteContext,
    width: int,
    reading: kept_figures.Reading,
    previous: Laid | None,
) -> Laid:
    """A model section's files from its blocks' figures (``reading``), each
    block sized as ``file_sizing()`` says (by its bound from SQL, or by its
    kept measured pieces, else its worst case) unless the URL count alone
    sizes files, packed; nothing rendered. When ``previous`` was packed
    from the kept figures ``reading`` brought up to date, one block a unit,
    only the files around the blocks that moved are packed again
    (``pagination.repack``): the cost of a save, not of the section."""
    figures = reading.figures
    if not figures:
        return Laid([], reading.state)
    end_key = next(reversed(figures)) * width
    # Packed again in part only from the layout of the state these came from.
    since = previous if previous and reading.base and previous.source == reading.base else None
    if since is None:
        urls = sum(section.figure_urls(f) for f in figures.values())
    else:
        now, then = _now(reading).values(), reading.before.values()
        urls = since.urls + sum(section.figure_urls(f) for f in now if f is not None)
        urls -= sum(section.figure_urls(f) for f in then if f is not None)
    if not section.measures_files() or section.fits_unmeasured(urls):
        unit = bounds.bounded_unit(section, lambda f: 0)
        return _blocks_packed(section, reading, width, unit, since, urls, "count", end_key)
    bound = bounds.location_bound(section)
    # Blocks read under the same settings have the same fields measured.
    checked = figures.values() if since is None else _now(reading).values()
    if bound is None or not all(
        f is None or len(f.field_bytes) == len(bound.paths) for f in checked
    ):
        units = measuring.measured_units(section, figures, width, site)
        return Laid(measuring.pack_measured(section, units, end_key), None, urls, "measure")
    entry_bound = bounds.location_entry_bound(section, site, bound)
    unit = bounds.bounded_unit(section, entry_bound)
    room = section.measured_room()
    if since is not None and all(
        f is None or unit(block * width, f).size <= room for block, f in _now(reading).items()
    ):
        return _blocks_packed(section, reading, width, unit, since, urls, "bound", end_key)
    units = bounds.bounded_units(section, figures, width, site, entry_bound)
    # Blocks a bound split (read again as narrower ones) are not one a unit.
    whole = all(u.last_key % width == 0 for u in units)
    spans = measuring.pack_measured(section, units, end_key)
    return Laid(spans, reading.state if whole else None, urls, "bound")


def _now(reading: kept_figures.Reading) -> dict[int, blocks.BlockFigures | None]:
    """The figures now of the blocks that moved (None: no row now)."""
    return {block: reading.figures.get(block) for block in reading.before}


def _blocks_packed(
    section: ModelSection,
    reading: kept_figures.Reading,
    width: int,
    unit: Callable[[int, blocks.BlockFigures], pagination.Unit],
    since: Laid | None,
    urls: int,
    sizing: str,
    end_key: int,
) -> Laid:
    """The files of ``reading``'s blocks, one a unit: packed again from
    ``since`` where blocks moved when it is of the same sizing, else packed."""
    figures = reading.figures
    order = list(figures)
    measured = sizing != "count"

    def units_after(key: int | None) -> Iterator[pagination.Unit]:
        start = 0 if key is None else bisect.bisect_right(order, key // width)
        for block in islice(order, start, None):
            yield unit(block * width, figures[block])

    limit, room = section.get_limit(), section.measured_room() if measured else 0
    if since is not None and since.sizing == sizing:
        changed = [block * width for block in reading.before]
        spans = pagination.repack(
            since.spans, units_after, changed, limit, room, end_key, measured=measured
        )
    else:
        spans = pagination.pack(units_after(None), limit, room, end_key, measured=measured)
    if measured and figures and not spans:
        measuring.no_url_error(section, "it", "the section")
    return Laid(spans, reading.state, urls, sizing)
