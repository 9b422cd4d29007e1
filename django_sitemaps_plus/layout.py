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
import functools
import hashlib
import inspect
import logging
import re
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import islice
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.db import models
from django.utils import translation
from django.utils.functional import Promise

from django_sitemaps_plus import blocks, pagination, quiet, render, versions, xml
from django_sitemaps_plus import cache as sitemap_cache
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.reads import BATCH_ROWS

if TYPE_CHECKING:
    from django.core.cache import BaseCache

    from django_sitemaps_plus import kept_figures
    from django_sitemaps_plus.sections import ModelSection, Section
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")

#: (key, URLs, bytes, lastmod text) of one measured row.
Measured = tuple[int, int, int, "str | None"]


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
    key = _layout_key(signature(section, site))
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
    stamp = signature(section, site, name)

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
    text = repr((signature(section, site), context, span.after, span.last, figures, current))
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
        key = _layout_key(signature(section, site))
        quiet.call(cache, "delete_many", [key, _ranges_key(key)])
        quiet.call(cache, "set", generation_key(section), uuid.uuid4().hex, timeout=None)


def generation_key(section: Section) -> str:
    """The token ``forget_sizes`` replaces: every measured block, and the
    kept block figures (``kept_figures``), are read again."""
    return pagination.fingerprint_key("generation", section.get_name())


def _layout_key(stamp: str) -> str:
    """The cache key of the layout kept under ``signature`` ``stamp``."""
    return pagination.fingerprint_key("layout", stamp)


def _ranges_key(layout_key: str) -> str:
    """The cache key of the kept layout's file key ranges."""
    return f"{layout_key}:ranges"


def signature(section: Section, site: SiteContext, name: str | None = None) -> str:
    """What the layout and a block's entries depend on besides the rows:
    the site, the language, and the section's settings, its extensions'
    public attributes among them (``settings_token``: the same text in
    every process). ``name``: the section's, when the caller has it."""
    extensions = [
        (_qualified(type(ext)), sorted((k, settings_token(v)) for k, v in vars(ext).items()
                                       if not k.startswith("_")))
        for ext in section.extensions
    ]  # fmt: skip
    return repr(
        (
            type(section).__module__,
            type(section).__qualname__,
            name or section.get_name(),
            site.cache_key,
            translation.get_language(),
            getattr(settings, "ROOT_URLCONF", None),
            getattr(section, "url_name", None),
            section.get_limit(),
            section.get_max_loc_length(),
            section.changefreq,
            str(section.priority),
            extensions,
        )
    )


#: Values that are their own token.
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
#: A default ``repr`` names the object's address, which differs per process.
_ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")


def settings_token(value: Any, depth: int = 0) -> Any:
    """``value`` as plain data whose ``repr`` is the same in every process
    for the same setting: containers item by item (sets and mappings sorted),
    an ``Enum`` member, class or function by its qualified name, a model
    instance by its label and key, a queryset by its SQL, a lazy string as text, an object with a
    ``repr`` of its own (a date, a ``Decimal``, a dataclass) by it, any
    addresses left out; another object by its class and public attributes.
    No address, no hash order: a setting changed in place changes it."""
    if isinstance(value, _SCALARS) and not isinstance(value, Enum):
        return value
    if depth > 5:
        return _qualified(type(value))
    deeper = depth + 1
    if isinstance(value, Enum):
        return (_qualified(type(value)), value.name)
    if isinstance(value, Promise):
        return str(value)
    if isinstance(value, list | tuple):
        return (type(value).__name__, [settings_token(v, deeper) for v in value])
    if isinstance(value, set | frozenset):
        return ("set", sorted((settings_token(v, deeper) for v in value), key=repr))
    if isinstance(value, Mapping):
        pairs = [(settings_token(k, deeper), settings_token(v, deeper)) for k, v in value.items()]
        return ("mapping", sorted(pairs, key=repr))
    if isinstance(value, models.Model):
        return (value._meta.label, value.pk)
    if isinstance(value, models.QuerySet):
        # Its SQL, never its repr (which runs it): a ``Prefetch``'s queryset.
        return ("queryset", value.model._meta.label, _query_text(value))
    if isinstance(value, type):
        return _qualified(value)
    if isinstance(value, functools.partial):
        return (
            "partial",
            settings_token(value.func, deeper),
            settings_token(value.args, deeper),
            settings_token(value.keywords, deeper),
        )
    if inspect.ismethod(value):
        return ("method", _qualified(value.__func__), settings_token(value.__self__, deeper))
    if inspect.isroutine(value):
        return _qualified(value)
    if getattr(type(value), "__repr__", None) is not object.__repr__:
        # Its own repr (a date, a Decimal, a dataclass), without addresses.
        return _ADDRESS_RE.sub("", repr(value))
    attributes = getattr(value, "__dict__", {})
    return (
        _qualified(type(value)),
        sorted(
            (k, settings_token(v, deeper)) for k, v in attributes.items() if not k.startswith("_")
        ),
    )


def _query_text(queryset: models.QuerySet[Any]) -> str:
    try:
        return str(queryset.query)
    except Exception:  # EmptyResultSet (``.none()``) and the like: no SQL to show.
        return ""


def _qualified(thing: Any) -> str:
    """A class's or function's module and qualified name (lambdas and
    local functions included: their names hold where they are defined)."""
    module = getattr(thing, "__module__", None)
    name = getattr(thing, "__qualname__", None) or getattr(thing, "__name__", type(thing).__name__)
    return f"{module}.{name}" if module else str(name)


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
    known = {**kept.known, **measured}
    if missing:
        _store_shelves(kept.cache, kept.keys, kept.prints, known, {kept.keys[b] for b in missing})
    return len(missing)


@dataclass
class _Kept:
    """What the cache holds of a section's measured blocks."""

    #: None: the cache is down.
    cache: BaseCache | None
    #: Each block's shelf key and fingerprint.
    keys: dict[int, str]
    prints: dict[int, tuple[Any, ...]]
    #: The pieces of the blocks measured under their current fingerprint.
    known: dict[int, list[pagination.Unit]]


def _kept_pieces(
    section: ModelSection, figures: dict[int, blocks.BlockFigures], width: int, site: SiteContext
) -> _Kept:
    """The blocks' kept pieces: one ``get_many`` of their shelves."""
    stamp = signature(section, site)
    cache: BaseCache | None = None
    shelves: dict[str, Shelf] = {}
    try:
        cache = quiet.get_cache()
        # Bumped by ``forget_sizes``: every block is measured again.
        generation = quiet.call(cache, "get", generation_key(section))
        keys = _shelf_keys(stamp, generation, width, figures)
        shelves = quiet.call(cache, "get_many", sorted(set(keys.values())))
    except quiet.CacheDown:
        cache = None  # every block sized by its worst case
        keys = _shelf_keys(stamp, None, width, figures)
    prints = {block: _fingerprint(f) for block, f in figures.items()}
    return _Kept(cache, keys, prints, _known_pieces(shelves, keys, prints))


@dataclass(frozen=True)
class LocationBound:
    """What bounds the bytes of a location spliced from columns
    (``LocationTemplate``): the pattern's literal text, the fields whose
    longest value SQL measures (``BlockFigures.field_bytes``) and the bytes
    of those of fixed length (a UUID's)."""

    literal: str
    paths: tuple[str, ...]
    fixed_value_bytes: int


def location_bound(section: ModelSection) -> LocationBound | None:
    """The bound of ``section``'s locations, when they are a pattern of
    fields (``url_name`` on the splice path, ``LocationTemplate.fast``) of
    types whose bytes are known, and no extension writes children (their
    bytes are not bounded from columns); else None (measured)."""
    if section.extensions:
        return None
    template = section.location_template()
    if template is None or not template.fast:
        return None
    paths: list[str] = []
    fixed = 0
    for name in template.kwarg_names:
        source = blocks.value_bytes_source(section.get_model(), section.url_kwargs[name])
        if source is None:
            return None
        if isinstance(source, int):
            fixed += source
        else:
            paths.append(source)
    return LocationBound("".join(template.pieces), tuple(paths), fixed)


def bounded_units(
    section: ModelSection,
    figures: dict[int, blocks.BlockFigures],
    width: int,
    site: SiteContext,
    entry_bound: Callable[[blocks.BlockFigures], int],
) -> list[pagination.Unit]:
    """Each block as a unit sized by its bound, nothing rendered: its URLs
    times ``entry_bound`` of its figures, the most bytes one of its entries
    can take (``location_entry_bound``, or ``worst_entry_bytes()``).

    When a block's bound exceeds a file's room (entries that may be
    kilobytes each), the section's figures are read again in narrower
    blocks (``block_figures``: one more grouped pass), narrow enough that
    even at the largest bound each is a fifth of a file at most (as blocks
    are of the URL limit, so files are packed four fifths full), and those
    blocks are the units: no legal URL is left out, however long its entries.
    """
    room = section.measured_room()
    unit = bounded_unit(section, entry_bound)
    units = [unit(block * width, f) for block, f in sorted(figures.items())]
    oversized = {(u.last_key - 1) // width + 1 for u in units if u.size > room}
    if not oversized:
        return units
    largest = max(entry_bound(figures[block]) for block in oversized)
    per_file = room // (largest * section.urls_per_item())
    narrow = narrower_width(width, per_file // pagination.UNIT_SHARE)
    units = [u for u in units if (u.last_key - 1) // width + 1 not in oversized]
    # Only the narrower blocks within the oversized ones are read.
    ratio = width // narrow
    wanted = {sub for b in oversized for sub in range((b - 1) * ratio + 1, b * ratio + 1)}
    last = max(wanted)
    for sub, f in section.block_figures(site, narrow, last, wanted, last).items():
        if (sub * narrow - 1) // width + 1 in oversized:
            units.append(unit(sub * narrow, f))
    return sorted(units, key=lambda u: u.last_key)


def bounded_unit(
    section: ModelSection, entry_bound: Callable[[blocks.BlockFigures], int]
) -> Callable[[int, blocks.BlockFigures], pagination.Unit]:
    """The unit of the rows up to a last key with ``figures``, sized by
    ``entry_bound`` (``bounded_units``); by count with ``entry_bound`` None."""

    def unit(last_key: int, f: blocks.BlockFigures) -> pagination.Unit:
        urls = section.figure_urls(f)
        return pagination.Unit(last_key, urls, urls * entry_bound(f), f.lastmod, f.undated)

    return unit


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
    since = previous if previous is not None and previous.source == reading.base else None
    if since is not None and reading.base is not None:
        urls = (
            since.urls
            + sum(section.figure_urls(f) if f is not None else 0 for f in _now(reading).values())
            - sum(section.figure_urls(f) for f in reading.before.values() if f is not None)
        )
    else:
        since = None
        urls = sum(section.figure_urls(f) for f in figures.values())
    if not section.measures_files() or section.fits_unmeasured(urls):
        unit = bounded_unit(section, lambda f: 0)
        return _blocks_packed(section, reading, width, unit, since, urls, "count", end_key)
    bound = location_bound(section)
    # Blocks read under the same settings have the same fields measured.
    checked = figures.values() if since is None else _now(reading).values()
    if bound is None or not all(
        f is None or len(f.field_bytes) == len(bound.paths) for f in checked
    ):
        units = measured_units(section, figures, width, site)
        return Laid(pack_measured(section, units, end_key), None, urls, "measure")
    unit = bounded_unit(section, location_entry_bound(section, site, bound))
    room = section.measured_room()
    if since is not None and all(
        f is None or unit(block * width, f).size <= room for block, f in _now(reading).items()
    ):
        return _blocks_packed(section, reading, width, unit, since, urls, "bound", end_key)
    units = bounded_units(section, figures, width, site, location_entry_bound(section, site, bound))
    # Blocks a bound split (read again as narrower ones) are not one a unit.
    whole = all(u.last_key % width == 0 for u in units)
    spans = pack_measured(section, units, end_key)
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
        no_url_error(section, "it", "the section")
    return Laid(spans, reading.state, urls, sizing)


def narrower_width(width: int, keys: int) -> int:
    """The widest block width of at most ``keys`` (at least 1) that divides
    ``width``, so each narrower block lies within one block."""
    keys = max(1, min(width, keys))
    return next(w for w in range(keys, 0, -1) if width % w == 0)


def location_entry_bound(
    section: ModelSection, site: SiteContext, bound: LocationBound
) -> Callable[[blocks.BlockFigures], int]:
    """The most bytes one ``<url>`` entry of a block can take, from its
    figures: the tags (``URL_TAGS_BYTES``), the site and the pattern's
    literal text as escaped, and each byte of the fields' longest values at
    worst ``WORST_BYTES_PER_CHARACTER`` (a non-ASCII byte is three once
    percent-encoded, an ASCII character at most six once escaped); never
    more than ``worst_entry_bytes()`` (a longer location is refused)."""
    worst = section.worst_entry_bytes()
    fixed = (
        render.URL_TAGS_BYTES
        + xml.byte_length(xml.escape(site.base_url + bound.literal))
        + bound.fixed_value_bytes * pagination.WORST_BYTES_PER_CHARACTER
    )

    def entry_bound(f: blocks.BlockFigures) -> int:
        return min(worst, fixed + sum(f.field_bytes) * pagination.WORST_BYTES_PER_CHARACTER)

    return entry_bound


def _fingerprint(figures: blocks.BlockFigures) -> tuple[Any, ...]:
    return (figures.count, figures.key_sum, figures.lastmod, figures.undated)


def _shelf_keys(
    stamp: str, generation: Any, width: int, figures: dict[int, blocks.BlockFigures]
) -> dict[int, str]:
    """Each block's shelf key."""
    return {
        block: pagination.fingerprint_key(
            "pieces", stamp, generation, width, (block - 1) // SHELF_BLOCKS
        )
        for block in figures
    }


def _known_pieces(
    shelves: dict[str, Shelf], keys: dict[int, str], prints: dict[int, tuple[Any, ...]]
) -> dict[int, list[pagination.Unit]]:
    """The pieces of the blocks whose kept fingerprint is their current one."""
    known = {}
    for block, key in keys.items():
        kept = shelves.get(key, {}).get(block)
        if kept is not None and kept[0] == prints[block]:
            known[block] = kept[1]
    return known


def _store_shelves(
    cache: BaseCache,
    keys: dict[int, str],
    prints: dict[int, tuple[Any, ...]],
    known: dict[int, list[pagination.Unit]],
    changed: set[str],
) -> None:
    """Write the shelves that hold a newly measured block, each with the
    section's current blocks on it (blocks gone since are dropped)."""
    shelves: dict[str, Shelf] = {key: {} for key in changed}
    for block, key in keys.items():
        if key in shelves and block in known:
            shelves[key][block] = (prints[block], known[block])
    quiet.quietly(None, cache, "set_many", shelves, timeout=pagination.PIECES_TIMEOUT)


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
