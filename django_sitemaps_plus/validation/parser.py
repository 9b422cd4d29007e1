"""The XML checker: sitemaps and indexes, streamed through lxml, and ``check()``,
the entry point that tells XML, text and binary apart.

XML goes through lxml's feed parser (``XMLPullParser``) with DTDs, entities
and the network off; the entries (the root's children) are checked in batches
once complete and then dropped, so memory stays flat however large the file.
What must be remembered across entries is kept as hashes (duplicates,
hreflang clusters).

The rules live beside what they check: ``prolog`` (declaration, encoding),
``locations`` (every address), ``values`` (lastmod, changefreq, priority and
the value helpers), ``batch`` (the fast path: entries of one shape checked
together by the same rules), ``text`` (text sitemaps), and each extension's
rules beside its writer (``django_sitemaps_plus.extensions.rules``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from lxml import etree

from django_sitemaps_plus import protocol
from django_sitemaps_plus.extensions.rules import hreflang as hreflang_rules
from django_sitemaps_plus.extensions.rules import images as image_rules
from django_sitemaps_plus.extensions.rules import news as news_rules
from django_sitemaps_plus.extensions.rules import video as video_rules
from django_sitemaps_plus.extensions.rules.values import Counter, strip
from django_sitemaps_plus.validation import batch
from django_sitemaps_plus.validation.context import Context
from django_sitemaps_plus.validation.locations import LocChecker
from django_sitemaps_plus.validation.prolog import (
    POSITION_SUFFIX_RE,
    PROLOG_SNIFF_BYTES,
    check_prolog,
    decodes_as_utf8,
    is_utf16,
    looks_like_xml,
    syntax_rule,
)
from django_sitemaps_plus.validation.report import FileReport
from django_sitemaps_plus.validation.text import TextChecker
from django_sitemaps_plus.validation.values import ProtocolValues

NS: Final = protocol.SITEMAP_NS
_IMAGE_IMAGE: Final = image_rules.IMAGE_TAG
_NEWS_NEWS: Final = news_rules.NEWS_TAG
_VIDEO_VIDEO: Final = video_rules.VIDEO_TAG
_XHTML_LINK: Final = hreflang_rules.LINK_TAG

# Positions in the XSD's sequence: loc, lastmod, changefreq, priority, then
# elements of other namespaces.
_LOC_POSITION: Final = 1
_LASTMOD: Final = 2
_CHANGEFREQ: Final = 3
_PRIORITY: Final = 4
_EXTENSION: Final = 5
# Extension elements dispatched by the same lookup (all in the "extension" slot).
_LINK: Final = 6
_IMAGE: Final = 7
_NEWS: Final = 8
_VIDEO: Final = 9
#: A link already known good (its href in place of the element).
_KNOWN_LINK: Final = 10

#: The local names of the elements a batch may end at: entries, or entries
#: under the wrong root (in any namespace).
_EVENT_NAMES: Final = ("url", "sitemap", "urlset", "sitemapindex")
#: Bytes fed between two batch checks: larger batches spread the fixed cost of
#: each XPath call over more entries; the tree holds at most this much at once.
BATCH_BYTES: Final = 1 << 17
#: Children of the root that start a batch check whatever their size: XPath
#: over more nodes than about this many at once gets slower per node.
BATCH_ENTRIES: Final = 256
#: Non-entry children kept under the root before they are reported and dropped.
MAX_STRAY_CHILDREN: Final = 1_024


def check(chunks: Iterable[bytes], report: FileReport, context: Context) -> None:
    """Check one sitemap's uncompressed bytes, adding findings to ``report``."""
    iterator = iter(chunks)
    # (Joined once: a stream of tiny chunks would make += quadratic.)
    pieces: list[bytes] = []
    size = 0
    for chunk in iterator:
        pieces.append(chunk)
        size += len(chunk)
        if size >= PROLOG_SNIFF_BYTES:
            break
    head = b"".join(pieces)
    if not head.strip():
        report.add("SM115", "the file is empty" if not head else "the file holds only whitespace")
        return
    checker: XmlChecker | TextChecker
    if looks_like_xml(head):
        checker = XmlChecker(report, context)
        if not check_prolog(report, head, is_utf16(head)):
            return
    elif b"\x00" in head or not decodes_as_utf8(head):
        report.add("SM112", "binary data: neither an XML nor a UTF-8 text sitemap")
        return
    else:
        checker = TextChecker(report, context)
    checker.feed(head)
    for chunk in iterator:
        if checker.stopped:
            return
        checker.feed(chunk)
    # A payload cut at the size limit ends early; that end is not a syntax error.
    checker.close(truncated=bool(getattr(chunks, "truncated", False)))


class XmlChecker:
    """Feeds bytes to lxml and checks the entries in batches as they complete."""

    def __init__(self, report: FileReport, context: Context) -> None:
        self.report = report
        self.context = context
        self.stopped = False
        # One event only, the root's start: entries are found as the root's
        # children (all but the last are complete), which spares lxml a Python
        # object per entry and event.
        self._parser = etree.XMLPullParser(
            events=("start",),
            tag=("{*}urlset", "{*}sitemapindex"),
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
        )
        self._root: Any = None
        self._last_entry: Any = None
        #: The last entry finished but not checked yet (its batch is growing).
        self._unchecked: Any = None
        self._unbatched_bytes = 0
        self.kind: str | None = None
        self.ns = NS
        self.entry_tag = ""
        self.entries = 0
        self.limit = protocol.MAX_URLS_PER_FILE
        self._prefix = "{}"
        self._positions: dict[str, int] = {}
        self._order = Counter()
        # The rules, each with what it remembers across the file.
        self.locs = LocChecker(report, context)
        self.values = ProtocolValues(report, context.now)
        self.hreflang = hreflang_rules.HreflangRules(report, self.locs.seen)
        self._news = news_rules.NewsRules(report, context.now)
        #: Deprecated image and video tags, reported once each at the end.
        self._deprecated = Counter()
        #: Entry shapes (child tag sequences) → their compiled batch checks.
        self.shapes: dict[tuple[str, ...], batch.Shape | None] = {}

    # Feeding -----------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        if self.stopped:
            return
        self._unbatched_bytes += len(chunk)
        try:
            self._parser.feed(chunk)
        except etree.XMLSyntaxError as exc:
            self._drain(final=True)
            self._syntax_error(exc)
            return
        self._drain(final=False)

    def close(self, *, truncated: bool = False) -> None:
        if self.stopped:
            return
        try:
            self._parser.close()
        except etree.XMLSyntaxError as exc:
            self._drain(final=True)
            if not truncated:
                self._syntax_error(exc)
                return
            self._count_cut_entry()
        else:
            self._drain(final=True, complete=True)
        if self._root is not None:
            self._stray_children()
        self._finish()

    def _count_cut_entry(self) -> None:
        """An entry open where the payload was cut (at the size limit) counts
        as one, unchecked: whether its end tag was read is not known."""
        root = self._root
        if self.kind is None or root is None or not len(root):
            return
        last = root[-1]
        if last is not self._last_entry and last.tag == self.entry_tag:
            self.entries += 1
            root.remove(last)

    def _syntax_error(self, exc: etree.XMLSyntaxError) -> None:
        self.stopped = True
        self.report.entries = self.entries
        message = POSITION_SUFFIX_RE.sub("", str(exc.msg or exc))
        line, column = exc.position if exc.position else (None, None)
        self.report.add(syntax_rule(message), message, line=line, column=column)

    def _drain(self, *, final: bool, complete: bool = False) -> None:
        """Check the entries finished so far, about BATCH_BYTES at a time (or
        all of them when ``final``).

        The root's children are complete but for the last, which may still be
        open: it counts as finished when the document is ``complete``, or
        when text after its end tag was read (its tail). A batch of uniform,
        plain entries has its values read by a few compiled XPath calls (C)
        instead of a Python visit of every child.
        """
        try:
            for _event, element in self._parser.read_events():
                if self._root is None:
                    self._start_root(element)  # (a nested urlset raises an event too)
        except etree.XMLSyntaxError:
            pass  # reported by feed()/close(), which see the same error
        root = self._root
        if root is None or self.stopped:
            return
        size = len(root)
        if size and not (complete or (final and root[-1].tail is not None)):
            size -= 1  # the last child may still be open
        if size:
            last = root[size - 1]
            if last is not self._last_entry and last is not self._unchecked:
                # The batch ends at an entry: a stray element after the last
                # one is reported after the entry that follows it (or at the end).
                entry_tag = self.entry_tag
                while last is not None and last is not self._last_entry:
                    tag = last.tag
                    if tag == entry_tag or (
                        tag.__class__ is str and tag.rpartition("}")[2] in _EVENT_NAMES
                    ):
                        self._unchecked = last
                        break
                    last = last.getprevious()
        if self._unchecked is not None and (
            final or self._unbatched_bytes >= BATCH_BYTES or len(root) > BATCH_ENTRIES
        ):
            self._check_unchecked()
        if len(root) > MAX_STRAY_CHILDREN:
            # Non-entry elements end no batch: report and drop them before they
            # pile up (the last child may be an entry still open).
            self._flush(root[-1])

    def _check_unchecked(self) -> None:
        if self._unchecked is not None:
            self._check_batch(self._unchecked)
            self._unchecked = None
            self._unbatched_bytes = 0

    def _drop_checked(self) -> None:
        """Remove the entry kept from the previous batch (the root's first child)."""
        if self._last_entry is not None:
            if self._root[0] is self._last_entry:
                del self._root[0]
            self._last_entry = None

    def _flush(self, stop: Any) -> None:
        """Check, report and drop all the root's children before ``stop``."""
        root = self._root
        self._drop_checked()
        end = root.index(stop)
        if self.kind is not None:
            self._slow_batch(root, 0, end, flush=True)
        del root[:end]

    def _check_batch(self, last: Any) -> None:
        """Check the root's children up to ``last`` (an entry just finished), then
        drop all but ``last``: libxml2 may still append text to the node just
        finished (lxml's iterparse idiom), so it is only cleared."""
        root = self._root
        self._drop_checked()
        end = root.index(last) + 1
        if self.kind is not None and not batch.check_batch(self, root, last, end):
            self._slow_batch(root, 0, end)
        last.clear(keep_tail=True)
        if end > 1:
            del root[: end - 1]
        self._last_entry = last

    def _slow_batch(self, root: Any, start: int, end: int, *, flush: bool = False) -> None:
        """Each child on its own (any shape): entries, misplaced entries, strays.

        An element that is no entry (nor an entry under the wrong root) is
        reported after the next one that is (or at ``flush``), in the order the
        findings had when entries were checked one by one at their end tags.
        """
        strays: list[Any] = []
        entry_tag = self.entry_tag
        for child in root[start:end]:
            tag = child.tag
            if tag == entry_tag:
                self.entries += 1
                if self.entries > self.limit:
                    self._over_limit(child)
                self.check_entry(child)
            elif isinstance(tag, str) and tag.rpartition("}")[2] in _EVENT_NAMES:
                self._report_stray(child)  # a url under sitemapindex, or the reverse
            else:
                strays.append(child)
                continue
            child.clear(keep_tail=True)
            for stray in strays:
                self._report_stray(stray)
            strays.clear()
        if flush:
            for stray in strays:
                self._report_stray(stray)

    def _report_stray(self, child: Any) -> None:
        """SM203 for an element of the sitemap's namespace (or none) directly
        under the root that is not its entry: a stray, or a url under
        sitemapindex (a sitemap under urlset)."""
        tag = child.tag
        # Elements of other namespaces under the root are allowed (xsd:any ##other).
        if isinstance(tag, str) and (not tag.startswith("{") or tag.startswith(f"{{{self.ns}}}")):
            self.report.add(
                "SM203",
                f"<{etree.QName(child).localname}> directly under <{self.kind}>",
                line=child.sourceline,
            )

    def _stray_children(self) -> None:
        """Report and drop the non-entry elements left under the root at the end."""
        root = self._root
        for child in list(root):
            if child is not self._last_entry and self.kind is not None:
                self._report_stray(child)  # (the last entry was checked already)
            root.remove(child)

    # Structure -----------------------------------------------------------------------

    def _start_root(self, root: Any) -> None:
        self._root = root
        if root.getroottree().docinfo.doctype:  # backstop for a DOCTYPE past the sniff
            self.report.add("SM111", "DOCTYPE present", line=root.sourceline)
            self.stopped = True
            return
        qname = etree.QName(root)
        if root.getparent() is not None or qname.localname not in ("urlset", "sitemapindex"):
            # The sniffed root was no sitemap root after all (past the sniffed bytes).
            self.report.add("SM201", f"<{qname.localname}> is not the root", line=root.sourceline)
            self.stopped = True
            return
        if qname.namespace != NS:
            self.report.add(
                "SM202",
                f"namespace {qname.namespace!r}" if qname.namespace else "no namespace",
                line=root.sourceline,
            )
            # Carry on in the declared namespace: the entries are still worth checking.
            self.ns = qname.namespace or ""
        self.kind = qname.localname
        self.report.kind = "urlset" if self.kind == "urlset" else "sitemapindex"
        self.locs.kind = self.kind
        prefix = f"{{{self.ns}}}" if self.ns else ""
        self._tags = {
            name: prefix + name
            for name in ("url", "sitemap", "loc", "lastmod", "changefreq", "priority")
        }
        self.entry_tag = self._tags["url" if self.kind == "urlset" else "sitemap"]
        self.limit = (
            protocol.MAX_URLS_PER_FILE if self.kind == "urlset" else protocol.MAX_SITEMAPS_PER_INDEX
        )
        # The XSD's sequence: each protocol child's position (an index has two).
        self._prefix = prefix or "{}"
        self._positions = {self._tags["loc"]: _LOC_POSITION, self._tags["lastmod"]: _LASTMOD}
        if self.kind == "urlset":
            self._positions[self._tags["changefreq"]] = _CHANGEFREQ
            self._positions[self._tags["priority"]] = _PRIORITY
            self._positions.update(
                {_XHTML_LINK: _LINK, _IMAGE_IMAGE: _IMAGE, _NEWS_NEWS: _NEWS, _VIDEO_VIDEO: _VIDEO}
            )

    def _over_limit(self, element: Any) -> None:
        if self.entries == self.limit + 1:  # reported once, at the first entry too many
            rule = "SM501" if self.kind == "urlset" else "SM502"
            self.report.add(
                rule,
                f"entry {self.entries:,} exceeds the limit of {self.limit:,}",
                line=element.sourceline,
            )

    def check_entry(self, entry: Any) -> None:
        report = self.report
        text = entry.text
        if text is not None and not text.isspace():
            report.add(
                "SM206",
                f"text {text.strip()[:80]!r} directly inside <{etree.QName(entry).localname}>",
                line=entry.sourceline,
            )
        positions = self._positions
        own_prefix = self._prefix
        known_good_link = self.hreflang.known_good
        values = self.values
        seen_order = 0
        seen_mask = 0
        repeated: set[str] | None = None
        images = 0
        alternates: list[str] | None = None
        # The protocol's four children are checked after the loop, when the
        # entry's loc (the URL every finding names) is known whatever the order.
        loc_el = lastmod_el = changefreq_el = priority_el = None
        # Extensions are checked after it too, in document order.
        extensions: list[tuple[int, Any]] = []
        for child in entry:
            tag = child.tag
            position = positions.get(tag)
            if position is None:
                if tag.__class__ is not str:
                    continue  # an entity reference or other non-element node
                if tag[0] != "{" or tag.startswith(own_prefix):
                    extensions.append((0, child))  # reported below as SM205
                    continue
                position = _EXTENSION  # another namespace: allowed after the protocol's four
            elif position >= _EXTENSION:
                # A known-good hreflang and href need no further check; the
                # href keeps its place among the alternates (document order).
                href = known_good_link(child) if position == _LINK else None
                if href is not None:
                    extensions.append((_KNOWN_LINK, href))
                else:
                    extensions.append((position, child))
                    if position == _IMAGE:
                        images += 1
                position = _EXTENSION
            else:
                bit = 1 << position
                if seen_mask & bit:
                    repeated = (repeated or set()) | {tag}
                else:
                    seen_mask |= bit
                    if position == _LOC_POSITION:
                        loc_el = child
                    elif position == _LASTMOD:
                        lastmod_el = child
                    elif position == _CHANGEFREQ:
                        changefreq_el = child
                    else:
                        priority_el = child
            if position < seen_order:
                self._order.note("order", child.sourceline)
            else:
                seen_order = position
        loc = strip(loc_el.text, report, "loc", loc_el) if loc_el is not None else ""
        if lastmod_el is not None:
            values.check_lastmod(lastmod_el, loc)
        if changefreq_el is not None and not values.changefreq_ok(changefreq_el.text):
            values.check_changefreq(changefreq_el, loc)
        if priority_el is not None and not values.priority_ok(priority_el.text):
            values.check_priority(priority_el, loc)
        for kind, child in extensions:
            if kind == _KNOWN_LINK:
                alternates = alternates if alternates is not None else []
                alternates.append(child)
            elif kind == _LINK:
                alternates = self.hreflang.check_link(child, loc, alternates)
            elif kind == _IMAGE:
                image_rules.check_image(child, loc, report, self._deprecated)
            elif kind == _NEWS:
                self._news.check(child, loc)
            elif kind == _VIDEO:
                video_rules.check_video(child, loc, report, self._deprecated)
            else:
                report.add(
                    "SM205",
                    f"<{etree.QName(child).localname}> inside <{etree.QName(entry).localname}>",
                    line=child.sourceline,
                    url=loc or None,
                )
        if repeated:
            for tag in sorted(repeated):
                report.add(
                    "SM208",
                    f"<{etree.QName(tag).localname}> appears more than once",
                    line=entry.sourceline,
                    url=loc or None,
                )
        if loc_el is None:
            report.add("SM207", "no <loc>", line=entry.sourceline)
            return
        key = self.locs.check(loc, loc_el.sourceline)
        if self.kind != "urlset":
            if key is not None:
                self.context.children.append((loc, loc_el.sourceline))
            return
        if images > image_rules.MAX_IMAGES_PER_URL:
            image_rules.check_count(images, entry.sourceline, loc, report)
        if key is not None and (alternates is not None or self.hreflang.pending):
            self.hreflang.check_cluster(key, loc, entry.sourceline, alternates)

    # End of file ------------------------------------------------------------------------

    def _finish(self) -> None:
        report = self.report
        report.entries = self.entries
        if self.kind is None:
            return
        if self.entries == 0:
            report.add("SM204", f"<{self.kind}> has no entries")
        self.values.finish(self.entries)
        self._news.finish()
        if "order" in self._order.count:
            count = self._order.count["order"]
            report.add(
                "SM209",
                f"{count:,} elements out of the XSD's order (loc, lastmod, "
                "changefreq, priority, extensions); first here",
                line=self._order.first["order"],
            )
        for name, count in self._deprecated.count.items():
            rule = (
                image_rules.DEPRECATED_RULE
                if name.startswith("image:")
                else video_rules.DEPRECATED_RULE
            )
            report.add(
                rule, f"{name} used {count:,} times; first here", line=self._deprecated.first[name]
            )
