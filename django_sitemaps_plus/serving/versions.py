"""Version tokens: what makes a cached sitemap file stale, in every process.

Each section has a version token in the sitemap cache
(``sitemaps_plus:v:<section>``), and so do all sections together
(``sitemaps_plus:v:*``). A cached file records the tokens it was rendered
under; ``invalidate()`` replaces tokens, so every process sharing the cache
stops using the old entries at once: nothing is deleted or cleared. A
model section's files are keyed by the tokens of the key blocks they hold
(``block_tokens``, ``range_tokens``), which a save of a row in them bumps;
its kept block figures find the blocks a save moved through the same tokens
(``moved_blocks``). ``receivers`` decides which tokens a change bumps;
``cache`` reads them for a file's lookup (docs/caching.md).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from django.core.cache import BaseCache

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine.blocks import block_of
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.signals import sitemaps_invalidated

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext

T = TypeVar("T")


KEY_PREFIX = "sitemaps_plus"


#: The version token shared by all sections (``invalidate()`` with no argument).
ALL = "*"


#: Seconds ``remember()`` keeps a value its sections' versions still match.
REMEMBER_TIMEOUT = 3600


def version_key(name: str) -> str:
    return f"{KEY_PREFIX}:v:{name}"


def new_token() -> str:
    return uuid.uuid4().hex[:16]


def _section_names(section: str | Section | Iterable[str | Section] | None) -> list[str]:
    if section is None:
        return [ALL]
    if isinstance(section, str) or hasattr(section, "get_name"):
        section = [section]  # type: ignore[list-item]
    return sorted({str(s) if isinstance(s, str) else s.get_name() for s in section})


def invalidate(section: str | Section | Iterable[str | Section] | None = None) -> None:
    """Make every cached file showing ``section`` stale, in every process.
    ``section`` is a section name, a ``Section``, several of them, or None
    for all sections (then every cached sitemap file of every site is stale).
    Use it after writes that send no model signals: ``QuerySet.update()``,
    ``bulk_create()``, raw SQL, another service writing the tables. Errors of
    the cache are logged, never raised.
    """
    names = bump(section)
    sitemaps_invalidated.send(sender=None, sections=None if names == [ALL] else names)


def bump(section: str | Section | Iterable[str | Section] | None = None) -> list[str]:
    """``invalidate()`` without the signal: replace the version tokens of
    the sections and of all their files (``files_token``).

    Returns the names it bumped.
    """
    names = _section_names(section)
    bump_tokens([*names, *(files_token(name) for name in names if name != ALL)])
    return names


def bump_tokens(tokens: Iterable[str]) -> None:
    """Replace the version tokens named ``tokens`` (section names,
    ``files_token``s, ``block_tokens``), in one cache call."""
    tokens = sorted(set(tokens))
    if not tokens:
        return
    new = {version_key(name): new_token() for name in tokens}
    # A cache that is down: logged; the files expire by CACHE_TIMEOUT.
    quiet.quietly(None, quiet.available(), "set_many", new, timeout=None)


# Per-block tokens ----------------------------------------------------------------
#
# A model section's file is keyed by what it holds (docs/caching.md): the
# tokens of the key blocks its range covers, bumped by a save of a row in
# them, not by the section's token, which a save bumps for the index. A
# token of level ``L`` stands for ``BLOCK_FANOUT ** L`` consecutive blocks;
# a save bumps its block's token at every level, and a file reads the
# lowest level that covers its range in at most ``FILE_TOKENS`` tokens (a
# file over sparse keys spans many empty blocks).

#: Blocks one token of the next level stands for.
BLOCK_FANOUT = 64


#: Levels of tokens: 64 ** 11 blocks exceed any 64-bit key.
BLOCK_LEVELS = 11


#: Most block tokens a file's lookup reads.
FILE_TOKENS = 16


def files_token(section: str) -> str:
    """The token every file of a model section shows besides its blocks':
    ``invalidate()`` bumps it, and a save whose rows cannot be told."""
    return f"{section}#files"


def _block_token(section: str, width: int, level: int, group: int) -> str:
    return f"{section}#{width}:{level}:{group}"


def block_tokens(section: str, width: int, keys: Iterable[int]) -> set[str]:
    """The tokens a change of the rows ``keys`` bumps: their blocks' at every level."""
    tokens = set()
    for key in keys:
        block = block_of(key, width) - 1
        for level in range(BLOCK_LEVELS):
            tokens.add(_block_token(section, width, level, block // BLOCK_FANOUT**level))
    return tokens


def range_tokens(section: str, width: int, after: int | None, last: int) -> list[str]:
    """The tokens a file of the keys ``after < key <= last`` shows: its
    blocks' at the lowest level giving at most ``FILE_TOKENS`` of them."""
    first = 0 if after is None else block_of(after + 1, width) - 1
    level, low, high = _covering_groups(first, block_of(last, width) - 1)
    return [_block_token(section, width, level, g) for g in range(low, high + 1)]


def _covering_groups(first: int, end: int) -> tuple[int, int, int]:
    """The lowest level whose groups cover the blocks ``first`` to ``end``
    (counted from 0) in at most ``FILE_TOKENS`` tokens: (level, first
    group, last group)."""
    for level in range(BLOCK_LEVELS):
        size = BLOCK_FANOUT**level
        low, high = first // size, end // size
        if high - low < FILE_TOKENS or level == BLOCK_LEVELS - 1:
            return level, low, high
    raise AssertionError("unreachable")


#: Where a block token stands: (level, group).
TokenPlace = tuple[int, int]


def moved_blocks(
    section: str, width: int, last: int, kept: Mapping[TokenPlace, str] | None
) -> tuple[set[int], dict[TokenPlace, str]]:
    """The blocks 1 to ``last`` whose token moved since ``kept`` (tokens as
    they were read before, by place), found a level at a time: one
    ``get_many`` compares the groups covering those blocks in at most
    ``FILE_TOKENS`` tokens, the next the children of the groups that moved,
    down to the blocks. A save bumps its block's token at every level, so a
    group whose token held holds no moved block: a few calls, not one per
    block. ``kept`` None: every token of those blocks is read (to keep).

    A token not in the cache is made (one ``set_many`` per level), so none
    kept is ever "none" again after an eviction took a save's token away; a
    caller reads the rows after this, so a save that a made token hides
    bumps it again when it commits. Returns the moved blocks and the tokens
    read (to keep for the next comparison). Raises ``quiet.CacheDown`` when
    the cache fails.
    """
    cache = quiet.get_cache()
    level, low, high = _covering_groups(0, max(last, 1) - 1)
    places = [(level, group) for group in range(low, high + 1)]
    read: dict[TokenPlace, str] = {}
    moved: set[int] = set()
    while places:
        keys = {place: version_key(_block_token(section, width, *place)) for place in places}
        found = quiet.call(cache, "get_many", list(keys.values()))
        made = {keys[place]: new_token() for place in places if keys[place] not in found}
        if made:
            quiet.call(cache, "set_many", made, timeout=None)
        changed = []
        for place, key in keys.items():
            read[place] = found[key] if key in found else made[key]
            if kept is None or read[place] != kept.get(place):
                changed.append(place)
        places = []
        for level, group in changed:
            if level == 0:
                moved.add(group + 1)
                continue
            size = BLOCK_FANOUT ** (level - 1)
            children = range(group * BLOCK_FANOUT, (group + 1) * BLOCK_FANOUT)
            places += [(level - 1, c) for c in children if c * size < last]
    return moved, read


def top_token(section: str, width: int) -> str:
    """The token every save of the section's rows bumps (the top level's
    one group: 64 ** 10 blocks)."""
    return _block_token(section, width, BLOCK_LEVELS - 1, 0)


def token_keys(names: Iterable[str]) -> list[str]:
    """The cache keys of the version tokens ``names`` (``ALL``, a section,
    ``files_token``, ``top_token``)."""
    return [version_key(name) for name in names]


def current_tokens(names: Sequence[str]) -> list[str]:
    """The current version tokens ``names`` (made when missing), in one
    ``get_many``: what a static build keeps a file's fingerprint with.
    Raises ``quiet.CacheDown`` when the cache fails."""
    cache = quiet.get_cache()
    found = quiet.call(cache, "get_many", [version_key(name) for name in names])
    return versions_of(cache, names, found)


def versions_of(cache: BaseCache, names: Sequence[str], found: dict[str, Any]) -> list[str]:
    """The current token of each name (from ``found``), creating missing ones."""
    tokens = []
    for name in names:
        key = version_key(name)
        token = found.get(key)
        if token is None:
            token = new_token()
            # add(): two processes creating the same token agree on the winner's.
            if not quiet.call(cache, "add", key, token, timeout=None):
                token = quiet.call(cache, "get", key) or token
        tokens.append(str(token))
    return tokens


def version_keys(sections: Sequence[Section]) -> list[str]:
    """The cache keys of the version tokens ``sections``' files depend on."""
    return [version_key(name) for name in [ALL, *sorted(s.get_name() for s in sections)]]


def version_stamp(cache: BaseCache, sections: Sequence[Section], found: dict[str, Any]) -> str:
    """The current version tokens of ``sections`` (read into ``found``, or
    made), as one string: it changes with every save or ``invalidate()``."""
    names = [ALL, *sorted(s.get_name() for s in sections)]
    return "\n".join(versions_of(cache, names, found))


def remember(
    site: SiteContext,
    sections: Sequence[Section],
    what: str,
    compute: Callable[[], T],
    timeout: int = REMEMBER_TIMEOUT,
) -> T:
    """``compute()``, kept in the cache until any of ``sections`` changes.
    For figures derived from the sections' rows that are costly on a large
    site and asked for often (the admin overview's files and lastmod counts):
    keyed by the site, ``what`` and the sections' version tokens, so a save
    or ``invalidate()`` makes them stale at once, as it does the files;
    ``timeout`` bounds what the clock alone changes (a news window). With
    ``CACHE`` off, or the cache down, it is ``compute()``.
    """
    if not conf.CACHE:
        return compute()
    try:
        cache = quiet.get_cache()
        names = [ALL, *sorted(s.get_name() for s in sections)]
        found: dict[str, Any] = quiet.call(cache, "get_many", [version_key(n) for n in names])
        versions = versions_of(cache, names, found)
        stamp = "\n".join([site.cache_key, what, *(f"{n}={v}" for n, v in zip(names, versions))])
        key = f"{KEY_PREFIX}:r:{hashlib.sha256(stamp.encode()).hexdigest()[:40]}"
        held = quiet.call(cache, "get", key)
    except quiet.CacheDown:
        return compute()
    if isinstance(held, tuple) and len(held) == 1:
        return cast(T, held[0])
    value = compute()
    # Wrapped: a computed None is remembered too.
    quiet.quietly(None, cache, "set", key, (value,), timeout=timeout)
    return value
