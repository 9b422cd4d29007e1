"""The streaming checker: XML sitemaps and indexes, and text sitemaps.

XML goes through lxml's feed parser (``XMLPullParser``) with DTDs, entities
and the network off; the entries (the root's children) are checked in batches
once complete and then dropped, so memory stays flat however large the file. What must be
remembered across entries is kept as hashes (duplicates, hreflang clusters).
"""

from __future__ import annotations

import codecs
import datetime as dt
import operator
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

from lxml import etree

from django_sitemaps_plus import protocol
from django_sitemaps_plus.validation.report import FileReport

NS: Final = protocol.SITEMAP_NS
_IMAGE_IMAGE: Final = f"{{{protocol.IMAGE_NS}}}image"
_IMAGE_LOC: Final = f"{{{protocol.IMAGE_NS}}}loc"
_NEWS_NEWS: Final = f"{{{protocol.NEWS_NS}}}news"
_VIDEO_VIDEO: Final = f"{{{protocol.VIDEO_NS}}}video"
_XHTML_LINK: Final = f"{{{protocol.XHTML_NS}}}link"

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

#: Bytes inspected before the root element for the XML declaration, a BOM
#: and a DOCTYPE.
PROLOG_SNIFF_BYTES: Final = 1 << 16
#: A text sitemap line longer than this is reported and skipped unread.
MAX_TEXT_LINE_BYTES: Final = 4 * protocol.MAX_LOC_LENGTH
#: hreflang links waiting for their target entry; beyond this, reciprocity is
#: checked only for links whose target was already seen (bounded memory).
MAX_PENDING_ALTERNATES: Final = 100_000
#: The local names of the elements a batch may end at: entries, or entries
#: under the wrong root (in any namespace).
_EVENT_NAMES: Final = ("url", "sitemap", "urlset", "sitemapindex")
#: Marks "not in the dictionary" where None is a meaningful value.
_UNSEEN: Final = object()
#: Bytes fed between two batch checks: larger batches spread the fixed cost of
#: each XPath call over more entries; the tree holds at most this much at once.
BATCH_BYTES: Final = 1 << 17
#: Children of the root that start a batch check whatever their size: XPath
#: over more nodes than about this many at once gets slower per node.
BATCH_ENTRIES: Final = 256
#: Non-entry children kept under the root before they are reported and dropped.
MAX_STRAY_CHILDREN: Final = 1_024
#: Distinct lastmod values whose verdict is remembered (dates recur across entries).
MAX_LASTMOD_VERDICTS: Final = 4_096
#: Distinct priority and hreflang values remembered as valid (few per file).
MAX_KNOWN_VALUES: Final = 1_000
#: Alternate URLs remembered as valid; the set starts again when full.
MAX_KNOWN_URLS: Final = 10_000
#: A timestamp this far ahead of now is still "now" (clock skew).
FUTURE_TOLERANCE: Final = dt.timedelta(minutes=10)
#: A date (no time) begins first in UTC+14 and ends last in UTC-12.
_EARLIEST_ZONE_AHEAD: Final = dt.timedelta(hours=14)
_LATEST_ZONE_BEHIND: Final = dt.timedelta(hours=12)

# RFC 3986 allows these characters unescaped; everything else ASCII must be
# percent-encoded, and % must start an escape.
# (Two patterns: a bare character class is scanned much faster than an
# alternation, and most URLs have no % at all.)
_INVALID_URI_CHAR_RE: Final = re.compile(r"[\x00-\x20\"<>\\^`{|}\x7f]")
_BAD_PERCENT_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_XML_DECL_RE: Final = re.compile(r"<\?xml(?P<attrs>\s[^?]*)\?>")
_DECL_ATTR_RE: Final = re.compile(r"""(version|encoding)\s*=\s*["']([^"']*)["']""")
_POSITION_SUFFIX_RE: Final = re.compile(r",? line \d+, column \d+$")
#: The common case of an absolute http(s) URL with a plain host, matched
#: without urlsplit (the hot path); anything else goes through loc_problem.
_PLAIN_HTTP_URL_RE: Final = re.compile(
    r"(?P<scheme>https?)://(?P<netloc>[A-Za-z0-9.-]+(?::\d{1,5})?)"
    r"(?P<path>[^?#]*)(?:\?(?P<query>[^#]*))?(?:#|$)"
)
#: A URL needing none of the character, escape, length or parameter checks:
#: http(s), a plain host, a path of unreserved and sub-delim characters only
#: (no %, no ;, no query, no fragment, ASCII).
_CLEAN_URL_RE: Final = re.compile(
    r"(https?)://([A-Za-z0-9.-]+(?::\d{1,5})?)(/[A-Za-z0-9\-._~!$&'()*+,=:@/]*)?"
)
_CLEAN_PATH_CHARS: Final = r"[A-Za-z0-9\-._~!$&'()*+,=:@/]"
#: Clean URLs, one a line (batches are checked joined with newlines).
_CLEAN_URL_LINES_RE: Final = re.compile(
    rf"(?:https?://[A-Za-z0-9.-]+(?::\d{{1,5}})?(?:/{_CLEAN_PATH_CHARS}*)?(?:\n|$))*"
)
#: A superset of what _SITEMAP_FILE_RE finds, over URLs one a line.
_SITEMAP_FILE_LINES_RE: Final = re.compile(
    r"sitemap[^/\n]*\.(?:xml|txt)(?:\.gz)?$", re.IGNORECASE | re.MULTILINE
)
_SITEMAP_FILE_SUFFIXES: Final = (".xml", ".xml.gz", ".txt", ".txt.gz", ".XML", ".TXT", ".GZ")
_SITEMAP_FILE_RE: Final = re.compile(r"sitemap[^/]*\.(?:xml|txt)(?:\.gz)?$", re.IGNORECASE)


def normalized_path(path: str) -> str:
    """A URL's path as it names a file: escapes decoded, then dot segments and
    repeated slashes resolved (``/dir/%2e%2e/x`` is ``/x``, never above ``/``).
    A trailing slash is kept."""
    if "%" not in path and "/." not in path and "//" not in path:
        return path or "/"  # the common case: already normal
    decoded = unquote(path) or "/"
    normal = "/" + posixpath.normpath(decoded).lstrip("/")
    if decoded.endswith(("/", "/.", "/..")) and not normal.endswith("/"):
        normal += "/"
    return normal


def url_scope(url: str) -> tuple[tuple[str, str], str]:
    """A sitemap URL's origin (scheme, host) and directory (normalised, ending
    with "/"): what it may list is on that origin, at or below that directory."""
    parts = urlsplit(url)
    path = normalized_path(parts.path)
    return (parts.scheme.lower(), parts.netloc.lower()), path[: path.rfind("/") + 1]


@dataclass
class Context:
    """What a check needs to know beyond the bytes."""

    #: The URL the file is published at (for the host and directory rules).
    file_url: str | None = None
    now: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
    #: Collect the index's children (loc, line) for following.
    children: list[tuple[str, int]] = field(default_factory=list)


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
    start = head.lstrip(b" \t\r\n")
    is_utf16 = head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) or head[:2] in (
        b"<\x00",
        b"\x00<",
    )
    checker: XmlChecker | TextChecker
    if start.startswith((b"<", codecs.BOM_UTF8 + b"<")) or is_utf16:
        checker = XmlChecker(report, context)
        if not checker.check_prolog(head, is_utf16):
            return
    elif b"\x00" in head or not _decodes_as_utf8(head):
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


def _decodes_as_utf8(head: bytes) -> bool:
    try:
        # The last three bytes may cut a multi-byte character in two.
        head[:-3].decode("utf-8") if len(head) >= PROLOG_SNIFF_BYTES else head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class LocChecker:
    """The rules every address obeys, shared by XML and text sitemaps."""

    def __init__(self, report: FileReport, context: Context, *, kind: str = "urlset") -> None:
        self.report = report
        self.kind = kind
        self.file_origin: tuple[str, str] | None = None
        self.file_directory = "/"
        if context.file_url:
            self.file_origin, self.file_directory = url_scope(context.file_url)
        self.first_origin: tuple[str, str] | None = None
        #: hash(loc) → hreflang cluster signature (None: no alternates).
        self.seen: dict[int, int | None] = {}
        self._last_scheme = self._last_netloc = ""
        self._last_origin = ("", "")
        self._lines_patterns: dict[tuple[str, str], re.Pattern[str] | None] = {}

    def check(self, value: str, line: int | None) -> int | None:
        """Report what is wrong with ``value``; return its hash when usable."""
        add = self.report.add
        length = len(value)
        clean = _CLEAN_URL_RE.fullmatch(value)
        if clean is not None and protocol.XSD_MIN_LOC_LENGTH <= length <= (
            protocol.YANDEX_MAX_LOC_LENGTH
        ):
            # Hot path: nothing to escape, no query, a length every rule accepts.
            scheme, netloc, path = clean.group(1, 2, 3)
            path = path or ""
            query = ""
        else:
            checked = self._check_unusual(value, length, line)
            if checked is None:
                return None
            scheme, netloc, path, query = checked
        if scheme == self._last_scheme and netloc == self._last_netloc:
            origin = self._last_origin  # the common case: the previous URL's origin
        else:
            origin = (scheme.lower(), netloc.lower())
            self._last_scheme, self._last_netloc, self._last_origin = scheme, netloc, origin
        if self.file_origin is not None:
            if origin != self.file_origin:
                add(
                    "SM310",
                    f"{origin[0]}://{origin[1]} is not the sitemap's "
                    f"{self.file_origin[0]}://{self.file_origin[1]}",
                    line=line,
                    url=value,
                )
            elif not normalized_path(path).startswith(self.file_directory):
                add("SM312", f"not at or below {self.file_directory}", line=line, url=value)
        elif self.first_origin is None:
            self.first_origin = origin
        elif origin != self.first_origin:
            add(
                "SM311",
                f"{origin[0]}://{origin[1]} differs from the file's first "
                f"{self.first_origin[0]}://{self.first_origin[1]}",
                line=line,
                url=value,
            )
        key = hash(value)
        if key in self.seen:
            add("SM313", "listed more than once in this file", line=line, url=value)
        else:
            self.seen[key] = None
        if query or ";" in path:
            self._check_parameters(query, path, line, value)
        if (
            self.kind == "urlset"
            and path.endswith(_SITEMAP_FILE_SUFFIXES)
            and _SITEMAP_FILE_RE.search(path)
        ):
            add("SM317", "looks like a sitemap file listed as a page", line=line, url=value)
        return key

    def quick(self, value: str) -> int | None:
        """``check()``'s hot path without its side effects: the hash of a URL
        with nothing to report, or None (then ``check()`` must run)."""
        clean = _CLEAN_URL_RE.fullmatch(value)
        if clean is None or not (
            protocol.XSD_MIN_LOC_LENGTH <= len(value) <= protocol.YANDEX_MAX_LOC_LENGTH
        ):
            return None
        scheme, netloc, path = clean.group(1, 2, 3)
        if scheme != self._last_scheme or netloc != self._last_netloc:
            return None  # a new origin: check() compares it and caches it
        origin = self._last_origin
        if self.file_origin is not None:
            if (
                origin != self.file_origin
                or not (path or "/").startswith(self.file_directory)
                or (path is not None and "/.." in path)  # check() normalises it
            ):
                return None
        elif origin != self.first_origin:
            return None
        key = hash(value)
        if key in self.seen:
            return None
        if (
            path
            and self.kind == "urlset"
            and path.endswith(_SITEMAP_FILE_SUFFIXES)
            and _SITEMAP_FILE_RE.search(path)
        ):
            return None
        return key

    def quick_lines(self) -> re.Pattern[str] | None:
        """A pattern matching URLs joined with newlines when each one would pass
        ``quick()`` but for its length and duplicates: clean, of the previous
        URL's origin, which is the file's (and within its directory) or the
        first one's. None when that origin would itself be reported."""
        scheme, netloc = self._last_scheme, self._last_netloc
        if not scheme:
            return None
        key = (scheme, netloc)
        pattern = self._lines_patterns.get(key, _UNSEEN)
        if pattern is _UNSEEN:
            pattern = None
            origin = self._last_origin
            directory = self.file_directory
            if origin == (self.file_origin or self.first_origin) and re.fullmatch(
                f"/{_CLEAN_PATH_CHARS}*", directory
            ):
                prefix = re.escape(f"{scheme}://{netloc}")
                if self.file_origin is not None and directory != "/":
                    path = re.escape(directory) + f"{_CLEAN_PATH_CHARS}*"
                else:
                    path = f"(?:/{_CLEAN_PATH_CHARS}*)?"
                pattern = re.compile(f"(?:{prefix}{path}(?:\n|$))*")
            if len(self._lines_patterns) >= 64:
                self._lines_patterns.clear()
            self._lines_patterns[key] = pattern
        return pattern  # type: ignore[return-value]

    def _check_unusual(
        self, value: str, length: int, line: int | None
    ) -> tuple[str, str, str, str] | None:
        """The checks a plain short ASCII URL without query can skip; None when unusable."""
        add = self.report.add
        if not value:
            add("SM301", "empty address", line=line)
            return None
        if length > protocol.MAX_LOC_LENGTH:
            add(
                "SM305",
                f"{length:,} characters (limit {protocol.MAX_LOC_LENGTH:,})",
                line=line,
                url=value[:200] + "...",
            )
            return None
        if length > protocol.YANDEX_MAX_LOC_LENGTH:
            add(
                "SM306",
                f"{length:,} characters (Yandex: {protocol.YANDEX_MAX_LOC_LENGTH:,})",
                line=line,
                url=value,
            )
        plain = _PLAIN_HTTP_URL_RE.match(value)
        if plain is None:
            problem = protocol.loc_problem(value)
            if problem is not None:
                add("SM302", f"{problem}: {value!r}", line=line, url=value)
                return None
            parts = urlsplit(value)
            scheme, netloc, path, query = parts.scheme, parts.netloc, parts.path, parts.query
        else:
            scheme, netloc, path, query = plain.group("scheme", "netloc", "path", "query")
            query = query or ""
        if length < protocol.XSD_MIN_LOC_LENGTH:
            add(
                "SM307",
                f"{length} characters; the XSD's tLoc requires at least "
                f"{protocol.XSD_MIN_LOC_LENGTH}",
                line=line,
                url=value,
            )
        invalid = _INVALID_URI_CHAR_RE.search(value)
        if invalid is None and "%" in value:
            invalid = _BAD_PERCENT_RE.search(value)
        if invalid is not None:
            add(
                "SM303",
                f"{invalid.group()!r} at position {invalid.start()} is not allowed in "
                "a URI unescaped",
                line=line,
                url=value,
            )
        if not value.isascii():
            add("SM304", "non-ASCII characters (an IRI)", line=line, url=value)
        return scheme, netloc, path, query

    def _check_parameters(self, query: str, path: str, line: int | None, value: str) -> None:
        names = {name.lower() for name, _ in parse_qsl(query, keep_blank_values=True)}
        if ";jsessionid=" in path.lower():
            names.add("jsessionid")
        add = self.report.add
        if session := sorted(names & protocol.SESSION_PARAMS):
            add("SM314", f"session parameter {', '.join(session)}", line=line, url=value)
        if sort := sorted(names & protocol.SORT_FILTER_PARAMS):
            add("SM315", f"sort/filter parameter {', '.join(sort)}", line=line, url=value)
        tracking = sorted(
            name
            for name in names
            if name in protocol.TRACKING_PARAMS or name.startswith(protocol.TRACKING_PARAM_PREFIXES)
        )
        if tracking:
            add("SM316", f"tracking parameter {', '.join(tracking)}", line=line, url=value)


def _strip(text: str | None, report: FileReport, what: str, where: Any) -> str:
    """The value of an element's text; surrounding whitespace is reported.

    ``where`` is a line number or the element (its line is looked up only
    when there is something to report: ``sourceline`` is not free).
    """
    if text is None:
        return ""
    value = text.strip()
    if value != text and value:
        line = where if where is None or isinstance(where, int) else where.sourceline
        report.add("SM210", f"whitespace around the value of <{what}>", line=line, url=value)
    return value


def _child(element: Any, tag: str) -> Any:
    """The first child with ``tag``: lxml's ``find()`` goes through ElementPath,
    many times slower for this one-level lookup on the hot path."""
    for child in element:
        if child.tag == tag:
            return child
    return None


def _is_http_url(value: str) -> bool:
    if len(value) <= protocol.MAX_LOC_LENGTH and _PLAIN_HTTP_URL_RE.match(value):
        return True  # fast path: implies protocol.loc_problem(value) is None
    return protocol.loc_problem(value) is None


#: The first and last instants ``datetime`` holds: a span reaching past them
#: (year 1 in UTC+14, year 9999 in UTC-12) is clamped to them.
_FIRST_INSTANT: Final = dt.datetime.min.replace(tzinfo=dt.timezone.utc)
_LAST_INSTANT: Final = dt.datetime.max.replace(tzinfo=dt.timezone.utc)


def _shift(instant: dt.datetime, delta: dt.timedelta) -> dt.datetime:
    try:
        return instant + delta
    except OverflowError:
        return _FIRST_INSTANT if delta < dt.timedelta(0) else _LAST_INSTANT


def _month_start(year: int, month: int) -> dt.datetime:
    """The first instant of a month in UTC (the last instant there is after 9999)."""
    if year > dt.MAXYEAR:
        return _LAST_INSTANT
    return dt.datetime(year, month, 1, tzinfo=dt.timezone.utc)


def _w3c_span(value: str) -> tuple[dt.datetime, dt.datetime] | None:
    """The earliest and latest UTC instants a W3C Datetime can mean, or None
    when it is not one (including dates the calendar lacks, like 2024-02-30).

    A value with a time is one instant. A date, month or year without a zone
    spans from its start in UTC+14 to its end in UTC-12, so "in the future"
    and "older than two days" are only said when true in every zone. Instants
    before year 1 or after 9999 (in UTC) are clamped to the first or last one.
    """
    match = protocol.W3C_DATETIME_RE.fullmatch(value)
    if match is None:
        return None
    year, month, day = match["year"], match["month"], match["day"]
    try:
        if match["hour"] is None:
            start = dt.datetime(int(year), int(month or 1), int(day or 1), tzinfo=dt.timezone.utc)
            if day is not None:
                end = _shift(start, dt.timedelta(days=1))
            elif month is not None:
                end = _month_start(start.year + start.month // 12, start.month % 12 + 1)
            else:
                end = _month_start(start.year + 1, 1)
            return _shift(start, -_EARLIEST_ZONE_AHEAD), _shift(end, _LATEST_ZONE_BEHIND)
        tz = match["tz"]
        offset = dt.timedelta(0)
        if tz != "Z":
            sign = 1 if tz[0] == "+" else -1
            offset = sign * dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6]))
        local = dt.datetime(
            int(year),
            int(month),
            int(day),
            int(match["hour"]),
            int(match["minute"]),
            int(match["second"] or 0),
            tzinfo=dt.timezone(offset),
        )
    except ValueError:  # 2024-02-30: the pattern allows it, the calendar does not
        return None
    try:
        instant = local.astimezone(dt.timezone.utc)
    except OverflowError:  # UTC is behind (or ahead of) the zone, past year 9999 (or 1)
        instant = _LAST_INSTANT if offset < dt.timedelta(0) else _FIRST_INSTANT
    return instant, instant


#: Children of an entry beyond which a batch is not checked as one shape.
_MAX_SHAPE_CHILDREN: Final = 40
_XPATH_NAMESPACES: Final = {"s": NS, "x": protocol.XHTML_NS, "i": protocol.IMAGE_NS}
#: The protocol children a batch shape may hold, by their name in XPath, in
#: the XSD's order.
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
class _Shape:
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
    def compile(cls, tags: tuple[str, ...], batch: str) -> _Shape | None:
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


@dataclass(frozen=True, slots=True)
class _Cluster:
    """An entry's alternates as the reciprocity check needs them."""

    #: The distinct hrefs, the sum of their hashes, each href with its hash.
    members: set[str]
    total: int
    hashed: list[tuple[str, int]]

    @classmethod
    def of(cls, alternates: list[str]) -> _Cluster:
        members = set(alternates)
        return cls(members, sum(map(hash, members)), [(href, hash(href)) for href in alternates])


class _Counter:
    """Occurrences of a repeated finding, reported once per file at the end."""

    def __init__(self) -> None:
        self.first: dict[str, int | None] = {}
        self.count: dict[str, int] = {}

    def note(self, key: str, line: int | None) -> None:
        if key not in self.count:
            self.first[key] = line
            self.count[key] = 0
        self.count[key] += 1


class XmlChecker:
    """Feeds bytes to lxml and checks each entry as its end tag arrives."""

    def __init__(self, report: FileReport, context: Context) -> None:
        self.report = report
        self.context = context
        self.now = context.now
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
        self._kind: str | None = None
        self._ns = NS
        self._locs = LocChecker(report, context)
        self._entries = 0
        self._lastmod_first: str | None = None
        self._lastmod_same = True
        self._lastmod_count = 0
        self._news = 0
        self._news_first_line: int | None = None
        self._order = _Counter()
        self._deprecated = _Counter()
        self._pending: dict[int, tuple[int | None, int | None]] = {}
        self._prefix = "{}"
        self._positions: dict[str, int] = {}
        #: Recently validated alternate URLs: each hreflang URL recurs once per
        #: version of the page, so a small cache saves most checks.
        self._valid_urls: set[str] = set()
        self._limit = protocol.MAX_URLS_PER_FILE
        #: Priority values seen valid (few distinct ones per file).
        self._valid_priorities: set[str] = set()
        self._valid_hreflangs: set[str] = set()
        #: lastmod value → the problems it has (an empty tuple: none).
        self._lastmod_verdicts: dict[str, tuple[tuple[str, str], ...]] = {}
        #: Entry shapes (child tag sequences) → their compiled batch checks.
        self._shapes: dict[tuple[str, ...], _Shape | None] = {}

    # Prolog ----------------------------------------------------------------------

    def check_prolog(self, head: bytes, is_utf16: bool) -> bool:
        """Declaration, encoding, BOM and DOCTYPE; False when the file is refused."""
        add = self.report.add
        if is_utf16:
            add("SM101", "UTF-16 encoded; sitemaps must be UTF-8", line=1)
            text = head.decode("utf-16", errors="replace")
        else:
            if head.startswith(codecs.BOM_UTF8):
                add("SM105", "the file starts with a UTF-8 byte order mark", line=1)
                head = head[len(codecs.BOM_UTF8) :]
            text = head.decode("latin-1")  # structure only: every byte maps to one char
        text = text.lstrip("\ufeff")
        declaration = _XML_DECL_RE.match(text)
        if declaration is None:
            if _XML_DECL_RE.match(text.lstrip()) is None:  # misplaced: the parser reports it
                add("SM102", "no XML declaration", line=1)
        else:
            attrs = dict(_DECL_ATTR_RE.findall(declaration["attrs"]))
            version = attrs.get("version")
            if version != "1.0":
                add("SM104", f"version {version!r} declared", line=1)
            encoding = attrs.get("encoding")
            normalized = (encoding or "utf-8").lower().replace("_", "-")
            if normalized not in ("utf-8", "utf8") and not is_utf16:
                add("SM101", f"encoding {encoding!r} declared; sitemaps must be UTF-8", line=1)
        first = _first_markup(text)
        if first is None:
            return True
        line = text.count("\n", 0, first.start()) + 1
        if first["doctype"]:
            if first["doctype"].lower() == "html":
                add("SM112", "an HTML page, not a sitemap", line=line)
            else:
                add(
                    "SM111",
                    "DOCTYPE present; the file is not processed further (no DTD is "
                    "loaded, no entity resolved)",
                    line=line,
                )
            return False
        local = first["element"].rpartition(":")[2]
        if local not in ("urlset", "sitemapindex"):
            # Not a sitemap: its structure is not checked further (and not kept in memory).
            add("SM201", f"root element <{local}>", line=line)
            return False
        return True

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
        if self._kind is None or root is None or not len(root):
            return
        last = root[-1]
        if last is not self._last_entry and last.tag == self._entry_tag:
            self._entries += 1
            root.remove(last)

    def _syntax_error(self, exc: etree.XMLSyntaxError) -> None:
        self.stopped = True
        self.report.entries = self._entries
        message = _POSITION_SUFFIX_RE.sub("", str(exc.msg or exc))
        line, column = exc.position if exc.position else (None, None)
        self.report.add(_syntax_rule(message), message, line=line, column=column)

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
                entry_tag = self._entry_tag
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
        if self._kind is not None:
            self._slow_batch(root, 0, end, flush=True)
        del root[:end]

    def _check_batch(self, last: Any) -> None:
        """Check the root's children up to ``last`` (an entry just finished), then
        drop all but ``last``: libxml2 may still append text to the node just
        finished (lxml's iterparse idiom), so it is only cleared."""
        root = self._root
        self._drop_checked()
        end = root.index(last) + 1
        if self._kind is not None and not self._fast_batch(root, last, end):
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
        entry_tag = self._entry_tag
        for child in root[start:end]:
            tag = child.tag
            if tag == entry_tag:
                self._entries += 1
                if self._entries > self._limit:
                    self._over_limit(child)
                self._check_entry(child)
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
        if isinstance(tag, str) and (not tag.startswith("{") or tag.startswith(f"{{{self._ns}}}")):
            self.report.add(
                "SM203",
                f"<{etree.QName(child).localname}> directly under <{self._kind}>",
                line=child.sourceline,
            )

    def _stray_children(self) -> None:
        """Report and drop the non-entry elements left under the root at the end."""
        root = self._root
        for child in list(root):
            if child is not self._last_entry and self._kind is not None:
                self._report_stray(child)  # (the last entry was checked already)
            root.remove(child)

    # Batches of plain entries --------------------------------------------------------

    def _fast_batch(self, root: Any, last: Any, count: int) -> bool:
        """Check the root's first ``count`` children (``last`` the final one)
        through one compiled shape; False (nothing done) unless they are all
        plain entries of one shape.

        The shape is read from the first entry; one XPath call (C) verifies
        that every entry has it (see ``_Shape``) and a few more return all the
        values, so no child is visited from Python. Every value is then
        checked here, and an entry with anything to report goes through
        ``_check_entry`` instead, before any state is changed: findings, their
        lines and their order are those of the general path.
        """
        if self._kind != "urlset" or self._ns != NS or self._entries + count > self._limit:
            return False
        following = last.getnext()
        if following is None:
            context, batch = root, _BATCH_FROM_ROOT
        else:
            context, batch = following, _BATCH_BEFORE
        shape = self._shape_for(root[0], batch)
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
        hashes = self._all_good(
            locs, lastmods, changefreqs, priorities, distinct_rows, hreflangs, image_locs
        )
        if hashes is not None:
            self._commit_batch(root, count, locs, hashes, lastmods, rows, distinct_rows)
            return True
        quick = self._locs.quick
        seen = self._locs.seen
        verdicts = self._lastmod_verdicts
        valid_priorities = self._valid_priorities
        valid_urls = self._valid_urls
        valid_hreflangs = self._valid_hreflangs
        changefreq_values = protocol.CHANGEFREQ_VALUES
        max_length = protocol.MAX_LOC_LENGTH
        clean_url = _CLEAN_URL_RE.fullmatch
        # Lines are read from the entries only where a finding may need one.
        entries = root[:count] if links or self._pending else None
        for index in range(count):
            loc = locs[index]
            key = quick(loc)
            good = key is not None
            lastmod = None
            if good and lastmods is not None:
                lastmod = lastmods[index]
                problems = verdicts.get(lastmod)
                if problems is None:
                    if lastmod.strip() != lastmod:
                        good = False  # SM210: the general path reports it
                    else:
                        problems = self._lastmod_verdict(lastmod)
                good = good and not problems
            if good and changefreqs is not None and changefreqs[index] not in changefreq_values:
                good = False
            if good and priorities is not None and priorities[index] not in valid_priorities:
                good = False
            alternates = None
            if good and hrefs is not None and hreflangs is not None:
                first = index * links
                alternates = hrefs[first : first + links]
                for href in alternates:
                    # (Clean: unlike _check_link's, this href is not stripped.)
                    if href not in valid_urls and (
                        len(href) > max_length or not clean_url(href) or not self._url_ok(href)
                    ):
                        good = False
                        break
                for hreflang in hreflangs[first : first + links]:
                    if hreflang not in valid_hreflangs and not self._hreflang_ok(hreflang):
                        good = False
                        break
            if good and image_locs is not None:
                first = index * images
                for image in image_locs[first : first + images]:
                    if len(image) > max_length or not clean_url(image):
                        good = False
                        break
            self._entries += 1
            if key is None or not good:
                self._check_entry(entries[index] if entries is not None else root[index])
                continue
            seen[key] = None
            if lastmod is not None:
                self._note_lastmod(lastmod)
            if entries is not None and (alternates is not None or self._pending):
                self._check_cluster(key, loc, entries[index].sourceline, alternates)
        return True

    def _all_good(
        self,
        locs: list[str],
        lastmods: list[str] | None,
        changefreqs: list[str] | None,
        priorities: list[str] | None,
        link_rows: Iterable[tuple[str, ...]],
        hreflangs: list[str] | None,
        image_locs: list[str] | None,
    ) -> list[int] | None:
        """The hashes of ``locs`` when no entry of the batch has anything to
        report (each would pass the per-entry checks of ``_fast_batch``), by a
        few operations over whole lists; None to check entry by entry."""
        lines = self._locs.quick_lines()
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
        if "sitemap" in joined.lower() and _SITEMAP_FILE_LINES_RE.search(joined):
            return None
        if self._locs.file_directory != "/" and "/.." in joined:
            return None  # a dot segment may lead out of the directory (SM312)
        hashes = list(map(hash, locs))
        seen = self._locs.seen
        if len(set(hashes)) != len(hashes) or not seen.keys().isdisjoint(hashes):
            return None
        if changefreqs is not None and not protocol.CHANGEFREQ_VALUES.issuperset(changefreqs):
            return None
        if priorities is not None:
            valid_priorities = self._valid_priorities
            for value in set(priorities).difference(valid_priorities):
                if value.strip() != value or not _is_priority(value):
                    return None
                if len(valid_priorities) < MAX_KNOWN_VALUES:
                    valid_priorities.add(value)
            if not valid_priorities.issuperset(priorities):
                return None
        if lastmods is not None:
            verdicts = self._lastmod_verdicts
            for value in set(lastmods):
                problems = verdicts.get(value)
                if problems is None:
                    if value.strip() != value:
                        return None
                    problems = self._lastmod_verdict(value)
                if problems:
                    return None
        if hreflangs is not None:
            valid_urls = self._valid_urls
            new_urls = set(chain.from_iterable(link_rows)).difference(valid_urls)
            new_urls.difference_update(locs)  # (checked above, and more strictly)
            if new_urls:
                if max(map(len, new_urls)) > protocol.MAX_LOC_LENGTH:
                    return None
                if _CLEAN_URL_LINES_RE.fullmatch("\n".join(new_urls)) is None:
                    return None
                if len(valid_urls) + len(new_urls) > MAX_KNOWN_URLS:
                    valid_urls.clear()
                valid_urls.update(new_urls)
            for value in set(hreflangs).difference(self._valid_hreflangs):
                if not self._hreflang_ok(value):
                    return None
        if image_locs is not None and (
            max(map(len, image_locs)) > protocol.MAX_LOC_LENGTH
            or _CLEAN_URL_LINES_RE.fullmatch("\n".join(image_locs)) is None
        ):
            return None
        return hashes

    def _commit_batch(
        self,
        root: Any,
        count: int,
        locs: list[str],
        hashes: list[int],
        lastmods: list[str] | None,
        rows: list[tuple[str, ...]] | None,
        distinct_rows: dict[tuple[str, ...], tuple[str, ...]],
    ) -> None:
        """Record a batch with nothing to report, as ``_check_entry`` would.

        ``rows`` holds each entry's alternate hrefs (None without links), equal
        rows being one object, the keys of ``distinct_rows``.
        """
        self._entries += count
        if lastmods is not None:
            self._lastmod_count += count
            if self._lastmod_first is None:
                self._lastmod_first = lastmods[0]
            if self._lastmod_same:
                first = self._lastmod_first
                self._lastmod_same = all(value == first for value in set(lastmods))
        seen = self._locs.seen
        if rows is None and not self._pending:
            seen.update(dict.fromkeys(hashes))
            return
        # Entry by entry, in order: reciprocity compares with entries seen before.
        check_cluster = self._check_cluster
        entries = root[:count]
        if rows is None:
            for index, entry in enumerate(entries):
                key = hashes[index]
                seen[key] = None
                check_cluster(key, locs[index], entry, None)
            return
        if self._commit_closed_clusters(entries, locs, hashes, rows, list(distinct_rows)):
            return
        # The versions of one page follow each other with the same links.
        previous: tuple[str, ...] | None = None
        cluster = _Cluster.of([])
        for index, row in enumerate(rows):
            alternates = list(row)
            if row is not previous:
                previous = row
                cluster = _Cluster.of(alternates)
            key = hashes[index]
            seen[key] = None
            check_cluster(key, locs[index], entries[index], alternates, cluster)

    def _commit_closed_clusters(
        self,
        entries: list[Any],
        locs: list[str],
        hashes: list[int],
        rows: list[tuple[str, ...]],
        distinct: list[tuple[str, ...]],
    ) -> bool:
        """Record the batch's hreflang clusters; False (nothing done) when the
        order of the entries could matter, to check them one by one instead.

        ``rows`` holds each entry's links, ``distinct`` the distinct rows (equal
        rows are one object). A row is closed when each of its links names an
        entry of this batch listing that same row; an entry is closed when its
        row is, it lists itself, and no earlier entry waits for it. Checked one
        by one, closed entries would all agree and leave nothing pending, so
        they are recorded at once. The other entries (a cluster cut by the
        batch's edge, a broken one) then go through ``_check_cluster`` in
        document order; that they refer to no closed entry keeps their findings
        those of the order of the file. (All of it over whole lists, in C: a
        Python loop here would cost more than the rest of the batch.)
        """
        links = len(distinct[0])
        by_loc = dict(zip(locs, rows))
        agree = map(
            operator.is_,
            map(by_loc.get, chain.from_iterable(distinct)),
            chain.from_iterable(map(repeat, distinct, repeat(links))),
        )
        closed_rows = list(compress(distinct, map(all, zip(*[agree] * links))))
        closed_row_ids = set(map(id, closed_rows))
        closed = list(
            map(
                operator.and_,
                map(closed_row_ids.__contains__, map(id, rows)),
                map(operator.contains, rows, locs),
            )
        )
        pending = self._pending
        if pending and not pending.keys().isdisjoint(hashes):
            closed = list(
                map(operator.and_, closed, map(operator.not_, map(pending.__contains__, hashes)))
            )
        # A cluster's signature: the sum of the hashes of its distinct members.
        signatures = dict(
            zip(
                map(id, closed_rows),
                map(
                    operator.and_,
                    map(sum, map(map, repeat(hash), map(set, closed_rows))),
                    repeat(0xFFFFFFFFFFFFFFFF),
                ),
            )
        )
        seen = self._locs.seen
        if all(closed):
            seen.update(zip(hashes, map(signatures.__getitem__, map(id, rows))))
            return True
        open_indexes = list(compress(range(len(closed)), map(operator.not_, closed)))
        closed_locs = set(compress(locs, closed))
        if any(not closed_locs.isdisjoint(rows[index]) for index in open_indexes):
            return False
        seen.update(
            zip(
                compress(hashes, closed),
                map(signatures.__getitem__, map(id, compress(rows, closed))),
            )
        )
        check_cluster = self._check_cluster
        for index in open_indexes:
            key = hashes[index]
            seen[key] = None
            check_cluster(key, locs[index], entries[index], list(rows[index]))
        return True

    def _shape_for(self, entry: Any, batch: str) -> _Shape | None:
        if entry.tag != self._entry_tag:
            return None
        tags: list[str] = []
        for child in entry:
            tag = child.tag
            if tag.__class__ is not str or len(tags) == _MAX_SHAPE_CHILDREN:
                return None
            tags.append(tag)
        key = (batch, *tags)
        shape = self._shapes.get(key, _UNSEEN)
        if shape is _UNSEEN:
            shape = _Shape.compile(tuple(tags), batch)
            if len(self._shapes) >= 256:
                self._shapes.clear()
            self._shapes[key] = shape
        return shape  # type: ignore[return-value]

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
            self._ns = qname.namespace or ""
        self._kind = qname.localname
        self.report.kind = "urlset" if self._kind == "urlset" else "sitemapindex"
        self._locs.kind = self._kind
        prefix = f"{{{self._ns}}}" if self._ns else ""
        self._tags = {
            name: prefix + name
            for name in ("url", "sitemap", "loc", "lastmod", "changefreq", "priority")
        }
        self._entry_tag = self._tags["url" if self._kind == "urlset" else "sitemap"]
        self._limit = (
            protocol.MAX_URLS_PER_FILE
            if self._kind == "urlset"
            else protocol.MAX_SITEMAPS_PER_INDEX
        )
        # The XSD's sequence: each protocol child's position (an index has two).
        self._prefix = prefix or "{}"
        self._positions = {self._tags["loc"]: _LOC_POSITION, self._tags["lastmod"]: _LASTMOD}
        if self._kind == "urlset":
            self._positions[self._tags["changefreq"]] = _CHANGEFREQ
            self._positions[self._tags["priority"]] = _PRIORITY
            self._positions.update(
                {_XHTML_LINK: _LINK, _IMAGE_IMAGE: _IMAGE, _NEWS_NEWS: _NEWS, _VIDEO_VIDEO: _VIDEO}
            )

    def _over_limit(self, element: Any) -> None:
        if self._entries == self._limit + 1:  # reported once, at the first entry too many
            rule = "SM501" if self._kind == "urlset" else "SM502"
            self.report.add(
                rule,
                f"entry {self._entries:,} exceeds the limit of {self._limit:,}",
                line=element.sourceline,
            )

    def _check_entry(self, entry: Any) -> None:
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
        valid_urls = self._valid_urls
        valid_hreflangs = self._valid_hreflangs
        seen_order = 0
        seen_mask = 0
        repeated: set[str] | None = None
        images = 0
        alternates: list[str] | None = None
        # The protocol's four children are checked after the loop, when the
        # entry's loc (the URL every finding names) is known whatever the order.
        loc_el = lastmod_el = changefreq_el = priority_el = None
        # Extensions are checked in the loop; their findings need the loc now.
        extensions: list[tuple[int, Any]] | None = None
        for child in entry:
            tag = child.tag
            position = positions.get(tag)
            if position is None:
                if tag.__class__ is not str:
                    continue  # an entity reference or other non-element node
                if tag[0] != "{" or tag.startswith(own_prefix):
                    if extensions is None:
                        extensions = []
                    extensions.append((0, child))  # reported below as SM205
                    continue
                position = _EXTENSION  # another namespace: allowed after the protocol's four
            elif position >= _EXTENSION:
                if position == _LINK:
                    # A known-good hreflang and href need no further check; the
                    # href keeps its place among the alternates (document order).
                    href = child.get("href")
                    if extensions is None:
                        extensions = []
                    if (
                        href in valid_urls
                        and child.get("hreflang") in valid_hreflangs
                        and child.get("rel") == "alternate"
                    ):
                        extensions.append((_KNOWN_LINK, href))
                    else:
                        extensions.append((position, child))
                else:
                    if position == _IMAGE:
                        images += 1
                    if extensions is None:
                        extensions = []
                    extensions.append((position, child))
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
        loc = _strip(loc_el.text, report, "loc", loc_el) if loc_el is not None else ""
        if lastmod_el is not None:
            self._check_lastmod(lastmod_el, loc)
        if changefreq_el is not None and changefreq_el.text not in protocol.CHANGEFREQ_VALUES:
            self._check_changefreq(changefreq_el, loc)
        if priority_el is not None and priority_el.text not in self._valid_priorities:
            self._check_priority(priority_el, loc)
        if extensions is not None:
            for kind, child in extensions:
                if kind == _KNOWN_LINK:
                    if alternates is None:
                        alternates = [child]
                    else:
                        alternates.append(child)
                elif kind == _LINK:
                    alternates = self._check_link(child, loc, alternates)
                elif kind == _IMAGE:
                    self._check_image(child, loc)
                elif kind == _NEWS:
                    self._check_news(child, loc)
                elif kind == _VIDEO:
                    self._check_video(child, loc)
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
        key = self._locs.check(loc, loc_el.sourceline)
        if self._kind != "urlset":
            if key is not None:
                self.context.children.append((loc, loc_el.sourceline))
            return
        if images > protocol.MAX_IMAGES_PER_URL:
            report.add(
                "SM802",
                f"{images:,} images (limit {protocol.MAX_IMAGES_PER_URL:,})",
                line=entry.sourceline,
                url=loc,
            )
        if key is not None and (alternates is not None or self._pending):
            self._check_cluster(key, loc, entry.sourceline, alternates)

    # Values ---------------------------------------------------------------------------

    def _check_lastmod(self, element: Any, loc: str) -> None:
        value = _strip(element.text, self.report, "lastmod", element)
        self._note_lastmod(value)
        for rule, message in self._lastmod_verdict(value):
            self.report.add(rule, message, line=element.sourceline, url=loc or None)

    def _note_lastmod(self, value: str) -> None:
        """Count an entry's lastmod for SM404 (all entries with the same one)."""
        self._lastmod_count += 1
        if self._lastmod_first is None:
            self._lastmod_first = value
        elif value != self._lastmod_first:
            self._lastmod_same = False

    def _lastmod_verdict(self, value: str) -> tuple[tuple[str, str], ...]:
        """The problems of a lastmod value (stripped); dates recur across
        entries, so each distinct value is judged once."""
        problems = self._lastmod_verdicts.get(value)
        if problems is None:
            problems = self._judge_lastmod(value)
            if len(self._lastmod_verdicts) < MAX_LASTMOD_VERDICTS:
                self._lastmod_verdicts[value] = problems
        return problems

    def _judge_lastmod(self, value: str) -> tuple[tuple[str, str], ...]:
        match = protocol.W3C_DATETIME_RE.fullmatch(value)
        if match is None:
            return (("SM401", f"{value!r} is not W3C Datetime"),)
        problems: list[tuple[str, str]] = []
        day, hour, second = match.group("day", "hour", "second")
        if day is None or (hour is not None and second is None):
            problems.append(
                (
                    "SM402",
                    f"{value!r} is W3C Datetime, but the official XSD "
                    "(xsd:date | xsd:dateTime) rejects it",
                )
            )
        span = _w3c_span(value)
        if span is None:
            problems.append(("SM401", f"{value!r} is not a calendar date"))
        elif span[0] > self.now + FUTURE_TOLERANCE:
            problems.append(("SM403", f"{value!r} is in the future"))
        return tuple(problems)

    def _check_changefreq(self, element: Any, loc: str) -> None:
        """A changefreq that is not exactly one of the values (the caller tests that)."""
        value = _strip(element.text, self.report, "changefreq", element)
        if value not in protocol.CHANGEFREQ_VALUES:
            self.report.add(
                "SM405",
                f"{value!r} is not a changefreq value",
                line=element.sourceline,
                url=loc or None,
            )

    def _check_priority(self, element: Any, loc: str) -> None:
        """A priority not known valid already (the caller tests that)."""
        text = element.text
        value = _strip(text, self.report, "priority", element)
        if _is_priority(value):
            if value == text and len(self._valid_priorities) < MAX_KNOWN_VALUES:
                self._valid_priorities.add(value)
        else:
            self.report.add(
                "SM406",
                f"{value!r} is not a decimal from 0.0 to 1.0",
                line=element.sourceline,
                url=loc or None,
            )

    # Extensions ------------------------------------------------------------------------

    def _check_image(self, image: Any, loc: str) -> None:
        image_loc = _child(image, _IMAGE_LOC)
        text = image_loc.text if image_loc is not None else None
        if text is None or not text.strip():
            self.report.add("SM801", "no image:loc", line=image.sourceline, url=loc or None)
        else:
            value = _strip(text, self.report, "image:loc", image_loc)
            if not _is_http_url(value):
                self.report.add(
                    "SM804",
                    f"image:loc {value[:200]!r}",
                    line=image_loc.sourceline,
                    url=loc or None,
                )
        if len(image) == 1:
            return
        for child in image:
            tag = child.tag
            if isinstance(tag, str) and tag.startswith(f"{{{protocol.IMAGE_NS}}}"):
                local = tag.rpartition("}")[2]
                if local in protocol.DEPRECATED_IMAGE_TAGS:
                    self._deprecated.note(f"image:{local}", child.sourceline)

    def _check_news(self, news: Any, loc: str) -> None:
        self._news += 1
        if self._news == protocol.MAX_NEWS_PER_FILE + 1:
            self._news_first_line = news.sourceline
        ns = f"{{{protocol.NEWS_NS}}}"
        line = news.sourceline
        missing: list[str] = []
        publication = _child(news, ns + "publication")
        if publication is None:
            missing.append("news:publication")
        else:
            for name in ("name", "language"):
                element = _child(publication, ns + name)
                if element is None or not (element.text or "").strip():
                    missing.append(f"news:{name}")
                elif name == "language":
                    language = element.text.strip()
                    if not protocol.NEWS_LANGUAGE_RE.fullmatch(language):
                        self.report.add(
                            "SM812",
                            f"news:language {language!r}",
                            line=element.sourceline,
                            url=loc or None,
                        )
        title = _child(news, ns + "title")
        if title is None or not (title.text or "").strip():
            missing.append("news:title")
        date = _child(news, ns + "publication_date")
        if date is None or not (date.text or "").strip():
            missing.append("news:publication_date")
        else:
            value = date.text.strip()
            span = _w3c_span(value)
            if span is None:
                self.report.add("SM813", f"{value!r}", line=date.sourceline, url=loc or None)
            elif span[1] < self.now - dt.timedelta(days=protocol.NEWS_WINDOW_DAYS):
                self.report.add(
                    "SM814", f"published {value}", line=date.sourceline, url=loc or None
                )
        if missing:
            self.report.add(
                "SM811", f"missing or empty: {', '.join(missing)}", line=line, url=loc or None
            )

    def _check_video(self, video: Any, loc: str) -> None:
        ns = f"{{{protocol.VIDEO_NS}}}"
        add = self.report.add
        url = loc or None
        present: dict[str, str] = {}
        tags = 0
        for child in video:
            tag = child.tag
            if not isinstance(tag, str) or not tag.startswith(ns):
                continue
            local = tag[len(ns) :]
            line = child.sourceline
            value = (child.text or "").strip()
            if local in protocol.DEPRECATED_VIDEO_TAGS:
                self._deprecated.note(f"video:{local}", line)
            if local == "tag":
                tags += 1
                continue
            present.setdefault(local, value)
            if local in ("thumbnail_loc", "content_loc", "player_loc"):
                if value and not _is_http_url(value):
                    add("SM828", f"video:{local} {value[:200]!r}", line=line, url=url)
                if value != (child.text or ""):
                    _strip(child.text, self.report, f"video:{local}", line)
            elif local == "title" and len(value) > protocol.MAX_VIDEO_TITLE_LENGTH:
                add("SM822", f"{len(value)} characters", line=line, url=url)
            elif local == "description" and len(value) > protocol.MAX_VIDEO_DESCRIPTION_LENGTH:
                add("SM823", f"{len(value):,} characters", line=line, url=url)
            elif local == "duration" and not _in_range(
                value, protocol.MIN_VIDEO_DURATION, protocol.MAX_VIDEO_DURATION, integer=True
            ):
                add("SM824", f"duration {value!r}", line=line, url=url)
            elif local == "rating" and not _in_range(
                value, protocol.MIN_VIDEO_RATING, protocol.MAX_VIDEO_RATING
            ):
                add("SM825", f"rating {value!r}", line=line, url=url)
            elif local in protocol.VIDEO_YES_NO_TAGS and value not in ("yes", "no"):
                add("SM829", f"video:{local} {value!r}", line=line, url=url)
            elif local in ("publication_date", "expiration_date") and _w3c_span(value) is None:
                add("SM830", f"video:{local} {value!r}", line=line, url=url)
        if tags > protocol.MAX_VIDEO_TAGS:
            add(
                "SM826",
                f"{tags} tags (limit {protocol.MAX_VIDEO_TAGS})",
                line=video.sourceline,
                url=url,
            )
        missing = [
            f"video:{name}"
            for name in ("thumbnail_loc", "title", "description")
            if not present.get(name)
        ]
        if not present.get("content_loc") and not present.get("player_loc"):
            missing.append("video:content_loc or video:player_loc")
        if missing:
            add("SM821", f"missing or empty: {', '.join(missing)}", line=video.sourceline, url=url)

    def _check_link(self, link: Any, loc: str, alternates: list[str] | None) -> list[str] | None:
        if link.get("rel") != "alternate":
            return alternates  # amphtml and other relations are not language versions
        hreflang = link.get("hreflang")
        href = link.get("href")
        if not self._hreflang_ok(hreflang):
            self.report.add(
                "SM841",
                f"hreflang {hreflang!r}"
                if hreflang is not None
                else 'rel="alternate" without hreflang',
                line=link.sourceline,
                url=loc or None,
            )
        href = (href or "").strip()
        if not self._url_ok(href):
            self.report.add("SM842", f"href {href[:200]!r}", line=link.sourceline, url=loc or None)
            return alternates
        if alternates is None:
            alternates = []
        alternates.append(href)
        return alternates

    def _hreflang_ok(self, value: str | None) -> bool:
        """Whether an hreflang value is valid (remembered when it is)."""
        known = self._valid_hreflangs
        if value in known:
            return True
        if value is None or not protocol.HREFLANG_RE.fullmatch(value):
            return False
        if len(known) < MAX_KNOWN_VALUES:
            known.add(value)
        return True

    def _url_ok(self, href: str) -> bool:
        """Whether an alternate's href is an http(s) URL (remembered when it is)."""
        known = self._valid_urls
        if href in known:
            return True
        if not _is_http_url(href):
            return False
        if len(known) >= MAX_KNOWN_URLS:
            known.clear()
        known.add(href)
        return True

    def _check_cluster(
        self,
        key: int,
        loc: str,
        where: Any,
        alternates: list[str] | None,
        cluster: _Cluster | None = None,
    ) -> None:
        """Self-reference and reciprocity of hreflang alternates, in bounded memory.

        Every version of a page lists the same set of versions (itself
        included), so all members of a cluster share one signature: the sum
        of the hashes of the set. A link to an entry not seen yet waits in
        ``_pending`` until that entry arrives; a link to an entry seen
        before compares with its stored signature.

        ``where`` is the entry's line or the entry itself (its line is read
        only when needed); ``cluster`` is ``_Cluster.of(alternates)`` when the
        caller has it already (the versions of a page list the same links).
        """
        report = self.report
        line: int | None = where if where is None or isinstance(where, int) else None
        signature: int | None = None
        if alternates is not None:
            if cluster is None:
                cluster = _Cluster.of(alternates)
            if loc in cluster.members:
                signature = cluster.total & 0xFFFFFFFFFFFFFFFF
            else:
                if line is None and where is not None:
                    line = where.sourceline
                report.add("SM843", "the page is not among its own alternates", line=line, url=loc)
                signature = (cluster.total + hash(loc)) & 0xFFFFFFFFFFFFFFFF
            self._locs.seen[key] = signature
        waiting = self._pending.pop(key, None)
        if waiting is not None and waiting[0] != signature:
            if line is None and where is not None:
                line = where.sourceline
            report.add(
                "SM844",
                f"the entry at line {waiting[1]} lists this URL as an alternate, "
                "but this URL lists "
                + ("no alternates" if signature is None else "a different set of versions"),
                line=line,
                url=loc,
            )
        if cluster is None:
            return
        seen = self._locs.seen
        pending = self._pending
        for href, other in cluster.hashed:
            if href == loc:
                continue
            other_signature = seen.get(other, _UNSEEN)
            if other_signature is not _UNSEEN:
                if other_signature != signature:
                    if line is None and where is not None:
                        line = where.sourceline
                    report.add(
                        "SM844",
                        f"lists {href} as an alternate, but that entry lists "
                        + (
                            "no alternates"
                            if other_signature is None
                            else "a different set of versions"
                        ),
                        line=line,
                        url=loc,
                    )
                continue
            waiting_for_other = pending.get(other)
            if waiting_for_other is not None:
                if waiting_for_other[0] != signature:
                    if line is None and where is not None:
                        line = where.sourceline
                    report.add(
                        "SM844",
                        f"lists {href} as an alternate, as does the entry at line "
                        f"{waiting_for_other[1]}, with a different set of versions",
                        line=line,
                        url=loc,
                    )
            elif len(pending) < MAX_PENDING_ALTERNATES:
                if line is None and where is not None:
                    line = where.sourceline
                pending[other] = (signature, line)

    # End of file ------------------------------------------------------------------------

    def _finish(self) -> None:
        report = self.report
        report.entries = self._entries
        if self._kind is None:
            return
        if self._entries == 0:
            report.add("SM204", f"<{self._kind}> has no entries")
        if (
            self._lastmod_same
            and self._lastmod_first is not None
            and self._lastmod_count == self._entries
            and self._entries >= protocol.SAME_LASTMOD_MIN_ENTRIES
        ):
            report.add("SM404", f"all {self._entries:,} entries have lastmod {self._lastmod_first}")
        if self._news > protocol.MAX_NEWS_PER_FILE:
            report.add(
                "SM815",
                f"{self._news:,} news:news (limit {protocol.MAX_NEWS_PER_FILE:,})",
                line=self._news_first_line,
            )
        if "order" in self._order.count:
            count = self._order.count["order"]
            report.add(
                "SM209",
                f"{count:,} elements out of the XSD's order (loc, lastmod, "
                "changefreq, priority, extensions); first here",
                line=self._order.first["order"],
            )
        for name, count in self._deprecated.count.items():
            rule = "SM803" if name.startswith("image:") else "SM827"
            report.add(
                rule, f"{name} used {count:,} times; first here", line=self._deprecated.first[name]
            )


def _first_markup(text: str) -> re.Match[str] | None:
    """The DOCTYPE or root start tag after the declaration, comments and PIs."""
    position = 0
    length = len(text)
    while position < length:
        while position < length and text[position] in " \t\r\n":
            position += 1
        if text.startswith("<?", position):
            end = text.find("?>", position)
        elif text.startswith("<!--", position):
            end = text.find("-->", position)
        else:
            return _FIRST_MARKUP_RE.match(text, position)
        if end < 0:
            return None
        position = end + 2
    return None


_FIRST_MARKUP_RE: Final = re.compile(
    r"<!DOCTYPE\s+(?P<doctype>[^\s\[>]+)|<(?P<element>[^\s/>!?]+)", re.IGNORECASE
)


def _syntax_rule(message: str) -> str:
    if "XML declaration allowed only at the start" in message:
        return "SM103"
    if "EntityRef" in message or "StartTag: invalid element name" in message:
        return "SM106"
    if any(
        marker in message
        for marker in ("proper UTF-8", "Invalid bytes in character encoding", "encoding")
    ):
        return "SM101"
    return "SM110"


def _in_range(value: str, low: float, high: float, *, integer: bool = False) -> bool:
    """Whether ``value`` is an xsd:decimal (optional sign, digits with an optional
    fraction, or ".5"), or with ``integer`` digits only, from ``low`` to ``high``."""
    pattern = r"\d+" if integer else r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
    return re.fullmatch(pattern, value) is not None and low <= float(value) <= high


def _is_priority(value: str) -> bool:
    return _in_range(value, protocol.MIN_PRIORITY, protocol.MAX_PRIORITY)


class TextChecker:
    """A text sitemap: one absolute URL per line, UTF-8, the same limits."""

    def __init__(self, report: FileReport, context: Context) -> None:
        self.report = report
        self.report.kind = "text"
        self.stopped = False
        self._locs = LocChecker(report, context)
        self._buffer = b""
        self._line = 0
        self._entries = 0
        self._skipping_long_line = False

    def feed(self, chunk: bytes) -> None:
        data = self._buffer + chunk
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._skipping_long_line:
                self._skipping_long_line = False
            else:
                self._check_line(data[start:end])
            start = end + 1
        self._buffer = data[start:]
        if len(self._buffer) > MAX_TEXT_LINE_BYTES and not self._skipping_long_line:
            self._line += 1
            self._entries += 1
            self.report.add(
                "SM305", f"a line of more than {MAX_TEXT_LINE_BYTES:,} bytes", line=self._line
            )
            self._skipping_long_line = True
        if self._skipping_long_line:
            self._buffer = b""

    def close(self, *, truncated: bool = False) -> None:
        if self._buffer and not self._skipping_long_line and not truncated:
            self._check_line(self._buffer)
        self._buffer = b""
        self.report.entries = self._entries
        if self._entries == 0:
            self.report.add("SM204", "no URLs in the text sitemap")

    def _check_line(self, raw: bytes) -> None:
        self._line += 1
        line = self._line
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.report.add("SM101", f"not UTF-8: {exc.reason} at byte {exc.start}", line=line)
            return
        if line == 1 and text.startswith("\ufeff"):
            self.report.add("SM105", "the file starts with a UTF-8 byte order mark", line=1)
            text = text[1:]
        if not text.strip():
            self.report.add("SM901", "blank line", line=line)
            return
        value = _strip(text, self.report, "line", line)
        self._entries += 1
        if self._entries == protocol.MAX_URLS_PER_FILE + 1:
            self.report.add("SM501", f"line {line:,} is URL {self._entries:,}", line=line)
        self._locs.check(value, line)
