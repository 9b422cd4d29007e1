"""The fast batch path: entries of one shape checked together, over whole lists.

One compiled XPath (C) verifies that every entry of a batch has the shape of
the first (``Shape``), a few more return all the values, and the values are
judged by the same rules as the per-entry path (``ProtocolValues``,
``LocChecker.quick``, the extension rules' ``*_ok``), over whole lists where
they allow it. An entry with anything to report goes through the per-entry
``XmlChecker.check_entry`` instead, before any state is changed, so findings,
their lines and their order are those of the per-entry path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from lxml import etree

from django_sitemaps_plus import protocol
from django_sitemaps_plus.extensions.rules import images as image_rules
from django_sitemaps_plus.extensions.rules.hreflang import LINK_TAG as _XHTML_LINK
from django_sitemaps_plus.validation.locations import SITEMAP_FILE_LINES_RE

if TYPE_CHECKING:
    from django_sitemaps_plus.validation.parser import XmlChecker

NS: Final = protocol.SITEMAP_NS
_IMAGE_IMAGE: Final = image_rules.IMAGE_TAG
#: Children of an entry beyond which a batch is not checked as one shape.
_MAX_SHAPE_CHILDREN: Final = 40
_XPATH_NAMESPACES: Final = {"s": NS, "x": protocol.XHTML_NS, "i": protocol.IMAGE_NS}
_SHAPE_PROTOCOL: Final = {
    f"{{{NS}}}loc": "s:loc",
    f"{{{NS}}}lastmod": "s:lastmod",
    f"{{{NS}}}changefreq": "s:changefreq",
    f"{{{NS}}}priority": "s:priority",
}
_SHAPE_ORDER: Final = ("s:loc", "s:lastmod", "s:changefreq", "s:priority")
#: The entries of a batch: the root's children, or the siblings before the
#: first child that is not part of the batch.
_BATCH_FROM_ROOT: Final = "*"
_BATCH_BEFORE: Final = "preceding-sibling::*"


@dataclass(frozen=True)
class Shape:
    """Compiled XPath for a batch of entries of one shape: the same protocol
    children (first, in the XSD's order), ``links`` xhtml:link and ``images``
    image:image, nothing else.

    ``check`` is true when each of the ``$c`` entries has that shape, no
    text directly inside it, at most one node in each protocol child, one
    image:loc (with at most one node) and nothing else in each image, and
    rel="alternate" on each link. ``values`` return every entry's values in
    document order, one list per protocol child (in ``protocol`` order),
    then hrefs, hreflangs and image:loc texts; a list shorter than expected
    (an empty element, a link without href) sends the batch to the general
    path. Only location steps and numeric positions are used: libxml2
    evaluates those without a new context per node, unlike other predicates.
    """

    check: Any
    values: tuple[Any, ...]
    protocol: tuple[str, ...]
    links: int
    images: int

    @classmethod
    def compile(cls, tags: tuple[str, ...], batch: str) -> Shape | None:
        protocol_names: list[str] = []
        for tag in tags:
            name = _SHAPE_PROTOCOL.get(tag)
            if name is None:
                break
            if protocol_names and _SHAPE_ORDER.index(name) <= _SHAPE_ORDER.index(
                protocol_names[-1]
            ):
                return None  # out of order or repeated: the general path reports it
            protocol_names.append(name)
        if not protocol_names or protocol_names[0] != "s:loc":
            return None
        extensions = tags[len(protocol_names) :]
        links = extensions.count(_XHTML_LINK)
        images = extensions.count(_IMAGE_IMAGE)
        if links + images != len(extensions):
            return None
        size = len(tags)
        terms = [
            f"count({batch}/self::s:url) = $c",
            f"count({batch}/*[{size + 1}]) = 0",
            f"count({batch}/text()[normalize-space()]) = 0",
        ]
        terms += [
            f"count({batch}/*[{position}]/self::{name}) = $c"
            for position, name in enumerate(protocol_names, 1)
        ]
        if size > len(protocol_names):  # (else the last position is checked above)
            terms.append(f"count({batch}/*[{size}]) = $c")
        # At most one node in each child but the images (checked below).
        terms.append(
            f"count({batch}/*/node()[2]) = count({batch}/i:image/node()[2])"
            if images
            else f"count({batch}/*/node()[2]) = 0"
        )
        # With exactly `size` children, `width` of them the protocol's, at least
        # `links` links and `images` images leave room for nothing else.
        if links:
            terms += [
                f"count({batch}/x:link[{links}]) = $c",
                # Node-set comparisons are existential: no rel differs.
                f"count({batch}/x:link/@rel) = $c * {links}",
                f"not({batch}/x:link/@rel != 'alternate')",
            ]
        if images:
            terms += [
                f"count({batch}/i:image[{images}]) = $c",
                f"count({batch}/i:image/*[1]/self::i:loc) = $c * {images}",
                f"count({batch}/i:image/*[2]) = 0",
                f"count({batch}/i:image/i:loc/node()[2]) = 0",
            ]
        # From the root, in document order: the batch's values come first, then
        # those of any child after it (a reverse axis would need a sort).
        if not links and not images:
            # Protocol children only, one text node each: one call for all texts.
            terms.append(f"count({batch}/*/text()) = $c * {size}")
            values = ["*/*/text()"]
        else:
            values = [f"*/{name}/text()" for name in protocol_names]
        if links:
            values += ["*/x:link/@href", "*/x:link/@hreflang"]
        if images:
            values.append("*/i:image/i:loc/text()")

        def xpath(expression: str) -> Any:
            return etree.XPath(expression, namespaces=_XPATH_NAMESPACES, smart_strings=False)

        return cls(
            check=xpath(" and ".join(terms)),
            values=tuple(xpath(expression) for expression in values),
            protocol=tuple(protocol_names),
            links=links,
            images=images,
        )


#: Marks "not in the dictionary" where None is a meaningful value.
_UNSEEN: Final = object()


def shape_for(checker: XmlChecker, entry: Any, batch: str) -> Shape | None:
    """The compiled shape of ``entry`` (cached), or None when it has none."""
    if entry.tag != checker.entry_tag:
        return None
    tags: list[str] = []
    for child in entry:
        tag = child.tag
        if tag.__class__ is not str or len(tags) == _MAX_SHAPE_CHILDREN:
            return None
        tags.append(tag)
    key = (batch, *tags)
    shapes = checker.shapes
    shape = shapes.get(key, _UNSEEN)
    if shape is _UNSEEN:
        shape = Shape.compile(tuple(tags), batch)
        if len(shapes) >= 256:
            shapes.clear()
        shapes[key] = shape
    return shape  # type: ignore[return-value]


def check_batch(checker: XmlChecker, root: Any, last: Any, count: int) -> bool:
    """Check the root's first ``count`` children (``last`` the final one)
    through one compiled shape; False (nothing done) unless they are all
    plain entries of one shape.

    The shape is read from the first entry; one XPath call (C) verifies that
    every entry has it (see ``Shape``) and a few more return all the values,
    so no child is visited from Python. Every value is then judged by the
    per-entry path's own rules, and an entry with anything to report goes
    through ``check_entry`` instead, before any state is changed: findings,
    their lines and their order are those of the per-entry path.
    """
    if checker.kind != "urlset" or checker.ns != NS or checker.entries + count > checker.limit:
        return False
    following = last.getnext()
    if following is None:
        context, batch = root, _BATCH_FROM_ROOT
    else:
        context, batch = following, _BATCH_BEFORE
    shape = shape_for(checker, root[0], batch)
    if shape is None or not shape.check(context, c=count):
        return False
    lists = [values(root) for values in shape.values]
    names = shape.protocol
    links = shape.links
    images = shape.images
    if not links and not images:
        width = len(names)
        texts = lists[0][: count * width]
        lists = [texts[offset::width] for offset in range(width)]
    if following is not None:
        # Values of the children after the batch (an entry still open) follow.
        extra = [count] * len(names) + [count * links] * (2 if links else 0)
        extra += [count * images] if images else []
        lists = [values[:size] for values, size in zip(lists, extra)]
    if any(len(values) != count for values in lists[: len(names)]):
        return False  # an empty protocol child: the general path reports it
    locs = lists[0]
    lastmods = lists[names.index("s:lastmod")] if "s:lastmod" in names else None
    changefreqs = lists[names.index("s:changefreq")] if "s:changefreq" in names else None
    priorities = lists[names.index("s:priority")] if "s:priority" in names else None
    hrefs = hreflangs = image_locs = None
    if links:
        hrefs, hreflangs = lists[len(names)], lists[len(names) + 1]
        if len(hrefs) != count * links or len(hreflangs) != count * links:
            return False
    if images:
        image_locs = lists[-1]
        if len(image_locs) != count * images:
            return False
    rows: list[tuple[str, ...]] | None = None
    distinct_rows: dict[tuple[str, ...], tuple[str, ...]] = {}
    if hrefs is not None:
        # Each entry's links; equal rows become one object (they then
        # compare by identity), the dictionary holding the distinct ones.
        rows = list(zip(*[iter(hrefs)] * links))
        rows = list(map(distinct_rows.setdefault, rows, rows))
    hashes = _all_good(
        checker, locs, lastmods, changefreqs, priorities, list(distinct_rows), hreflangs, image_locs
    )
    if hashes is not None:
        _commit(checker, root, count, locs, hashes, lastmods, rows, list(distinct_rows))
        return True
    # Entry by entry: the same rules, one value at a time.
    quick = checker.locs.quick
    seen = checker.locs.seen
    values = checker.values
    lastmod_ok = values.lastmod_ok
    changefreq_ok = values.changefreq_ok
    priority_ok = values.priority_ok
    hreflang = checker.hreflang
    href_ok = hreflang.href_ok
    hreflang_ok = hreflang.hreflang_ok
    image_locs_ok = image_rules.locs_ok
    # Lines are read from the entries only where a finding may need one.
    entries = root[:count] if links or hreflang.pending else None
    for index in range(count):
        loc = locs[index]
        key = quick(loc)
        lastmod = lastmods[index] if lastmods is not None else None
        alternates = None
        good = (
            key is not None
            and (lastmod is None or lastmod_ok(lastmod))
            and (changefreqs is None or changefreq_ok(changefreqs[index]))
            and (priorities is None or priority_ok(priorities[index]))
        )
        if good and hrefs is not None and hreflangs is not None:
            first = index * links
            alternates = hrefs[first : first + links]
            good = all(map(href_ok, alternates)) and all(
                map(hreflang_ok, hreflangs[first : first + links])
            )
        if good and image_locs is not None:
            first = index * images
            good = image_locs_ok(image_locs[first : first + images])
        checker.entries += 1
        if key is None or not good:
            checker.check_entry(entries[index] if entries is not None else root[index])
            continue
        seen[key] = None
        if lastmod is not None:
            values.note_lastmod(lastmod)
        if entries is not None and (alternates is not None or hreflang.pending):
            hreflang.check_cluster(key, loc, entries[index].sourceline, alternates)
    return True


def _all_good(
    checker: XmlChecker,
    locs: list[str],
    lastmods: list[str] | None,
    changefreqs: list[str] | None,
    priorities: list[str] | None,
    link_rows: list[tuple[str, ...]],
    hreflangs: list[str] | None,
    image_locs: list[str] | None,
) -> list[int] | None:
    """The hashes of ``locs`` when no entry of the batch has anything to
    report, by the same rules over whole lists (each distinct value judged
    once); None to judge entry by entry."""
    loc_checker = checker.locs
    lines = loc_checker.quick_lines()
    if lines is None:
        return None
    lengths = list(map(len, locs))
    if min(lengths) < protocol.XSD_MIN_LOC_LENGTH or (
        max(lengths) > protocol.YANDEX_MAX_LOC_LENGTH
    ):
        return None
    joined = "\n".join(locs)
    if lines.fullmatch(joined) is None:
        return None
    # (A case-insensitive pattern scans slowly; a plain substring test first.)
    if "sitemap" in joined.lower() and SITEMAP_FILE_LINES_RE.search(joined):
        return None
    if loc_checker.file_directory != "/" and "/.." in joined:
        return None  # a dot segment may lead out of the directory (SM312)
    hashes = list(map(hash, locs))
    seen = loc_checker.seen
    if len(set(hashes)) != len(hashes) or not seen.keys().isdisjoint(hashes):
        return None
    values = checker.values
    if changefreqs is not None and not all(map(values.changefreq_ok, set(changefreqs))):
        return None
    if priorities is not None and not all(map(values.priority_ok, set(priorities))):
        return None
    if lastmods is not None and not all(map(values.lastmod_ok, set(lastmods))):
        return None
    if hreflangs is not None and not checker.hreflang.links_ok(link_rows, hreflangs, locs):
        return None
    if image_locs is not None and not image_rules.locs_ok(image_locs):
        return None
    return hashes


def _commit(
    checker: XmlChecker,
    root: Any,
    count: int,
    locs: list[str],
    hashes: list[int],
    lastmods: list[str] | None,
    rows: list[tuple[str, ...]] | None,
    distinct_rows: list[tuple[str, ...]],
) -> None:
    """Record a batch with nothing to report, as ``check_entry`` would.
    ``rows`` holds each entry's alternate hrefs (None without links), equal
    rows being one object, the items of ``distinct_rows``.
    """
    checker.entries += count
    if lastmods is not None:
        checker.values.note_lastmods(lastmods)
    seen = checker.locs.seen
    hreflang = checker.hreflang
    if rows is None and not hreflang.pending:
        seen.update(dict.fromkeys(hashes))
        return
    # Entry by entry, in order: reciprocity compares with entries seen before.
    entries = root[:count]
    if rows is None:
        for index, entry in enumerate(entries):
            key = hashes[index]
            seen[key] = None
            hreflang.check_cluster(key, locs[index], entry, None)
        return
    hreflang.commit_rows(entries, locs, hashes, rows, distinct_rows)
