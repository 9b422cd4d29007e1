"""Location checks: the rules every address obeys (``<loc>`` of an entry or
an index's child, a line of a text sitemap): syntax, length, escapes, the
file's scope (origin and directory), duplicates, parameters.

``LocChecker.check`` reports; ``quick`` and ``quick_lines`` are its hot path
without side effects (a URL, or a batch of URLs joined with newlines, that
``check`` would pass silently), used by the batch path.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final
from urllib.parse import parse_qsl, unquote, urlsplit

from django_sitemaps_plus import protocol
from django_sitemaps_plus.extensions.rules.values import (
    CLEAN_PATH_CHARS,
    CLEAN_URL_RE,
    PLAIN_HTTP_URL_RE,
    Findings,
)
from django_sitemaps_plus.fetch import url_origin
from django_sitemaps_plus.validation.context import Context

# RFC 3986 allows these characters unescaped; everything else ASCII must be
# percent-encoded, and % must start an escape.
# (Two patterns: a bare character class is scanned much faster than an
# alternation, and most URLs have no % at all.)
_INVALID_URI_CHAR_RE: Final = re.compile(r"[\x00-\x20\"<>\\^`{|}\x7f]")
_BAD_PERCENT_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
#: A superset of what _SITEMAP_FILE_RE finds, over URLs one a line.
SITEMAP_FILE_LINES_RE: Final = re.compile(
    r"sitemap[^/\n]*\.(?:xml|txt)(?:\.gz)?$", re.IGNORECASE | re.MULTILINE
)
_SITEMAP_FILE_SUFFIXES: Final = (".xml", ".xml.gz", ".txt", ".txt.gz", ".XML", ".TXT", ".GZ")
_SITEMAP_FILE_RE: Final = re.compile(r"sitemap[^/]*\.(?:xml|txt)(?:\.gz)?$", re.IGNORECASE)
#: Marks "not in the dictionary" where None is a meaningful value.
_UNSEEN: Final = object()


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
    path = normalized_path(urlsplit(url).path)
    return url_origin(url), path[: path.rfind("/") + 1]


class LocChecker:
    """The rules every address obeys, shared by XML and text sitemaps."""

    def __init__(self, report: Findings, context: Context, *, kind: str = "urlset") -> None:
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
        clean = CLEAN_URL_RE.fullmatch(value)
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
        clean = CLEAN_URL_RE.fullmatch(value)
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
                f"/{CLEAN_PATH_CHARS}*", directory
            ):
                prefix = re.escape(f"{scheme}://{netloc}")
                if self.file_origin is not None and directory != "/":
                    path = re.escape(directory) + f"{CLEAN_PATH_CHARS}*"
                else:
                    path = f"(?:/{CLEAN_PATH_CHARS}*)?"
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
        plain = PLAIN_HTTP_URL_RE.match(value)
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
