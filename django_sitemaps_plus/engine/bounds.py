"""Blocks sized by a bound from SQL, nothing rendered: a location that is a
pattern of fields (``LocationBound``) is at most its literal text plus each
field's longest value in bytes (``BlockFigures.field_bytes``) at worst
``WORST_BYTES_PER_CHARACTER``; a block is its URLs times that
(``bounded_units``), read again in narrower blocks when that exceeds a file
(docs/pagination.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django_sitemaps_plus.engine import blocks, pagination, render, xml

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import ModelSection
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")


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
    oversized = {blocks.block_of(u.last_key, width) for u in units if u.size > room}
    if not oversized:
        return units
    largest = max(entry_bound(figures[block]) for block in oversized)
    per_file = room // (largest * section.urls_per_item())
    narrow = narrower_width(width, per_file // pagination.UNIT_SHARE)
    units = [u for u in units if blocks.block_of(u.last_key, width) not in oversized]
    # Only the narrower blocks within the oversized ones are read.
    ratio = width // narrow
    wanted = {sub for b in oversized for sub in range((b - 1) * ratio + 1, b * ratio + 1)}
    last = max(wanted)
    for sub, f in section.block_figures(site, narrow, last, wanted, last).items():
        if blocks.block_of(sub * narrow, width) in oversized:
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
