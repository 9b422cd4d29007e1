"""``validate()``: one target (bytes, a file, stdin, a URL) and, for an index,
the sitemaps it lists; ``validate_site()``: this site's own sitemaps."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Union
from urllib.parse import urljoin, urlsplit

from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus import protocol
from django_sitemaps_plus.fetch import (
    CHUNK_SIZE,
    Fetcher,
    FetchError,
    HttpFetcher,
    SiteFetcher,
    named_hosts,
    url_origin,
)
from django_sitemaps_plus.sites import site_context
from django_sitemaps_plus.validation import parser
from django_sitemaps_plus.validation.context import Context
from django_sitemaps_plus.validation.locations import normalized_path, url_scope
from django_sitemaps_plus.validation.report import (
    DEFAULT_MAX_FINDINGS,
    FailLevel,
    FileReport,
    Report,
)
from django_sitemaps_plus.validation.rules import RULES, Severity
from django_sitemaps_plus.validation.stream import Payload

Target = Union[bytes, str, "os.PathLike[str]", IO[bytes]]

#: Content types a sitemap may be served with (xml, gzip, text); parameters ignored.
ACCEPTED_CONTENT_TYPES = frozenset(
    {
        "application/xml",
        "text/xml",
        "application/gzip",
        "application/x-gzip",
        "application/octet-stream",
        "text/plain",
    }
)


class UnreadableTarget(Exception):
    """The target itself cannot be read (missing file, network error, non-200)."""


class UnknownRule(ValueError):
    """``ignore`` names a rule id that does not exist."""


@dataclass
class Progress:
    """How far a run has got, passed to ``on_progress`` after each file.
    ``files_total`` counts the files known to be coming: the target, and the
    children of each index read so far that will be followed (it grows as
    indexes are read, and is an upper bound: a child another index already
    led to is not read twice). ``urls`` counts the URLs read (the entries of
    sitemaps and text sitemaps, not those of indexes).
    """

    files_done: int = 0
    files_total: int = 0
    urls: int = 0
    #: The file just done.
    current: str = ""


class _Run:
    """One validation: a target, and what its indexes lead to."""

    def __init__(
        self,
        follow: bool,
        ignore: Iterable[str],
        max_findings: int | None,
        fetcher: Fetcher | None,
        now: dt.datetime | None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.follow = follow
        self.ignored = frozenset(ignore)
        unknown = self.ignored - RULES.keys()
        if unknown:
            raise UnknownRule(f"unknown rule id(s): {', '.join(sorted(unknown))}")
        self.max_findings = max_findings
        self._fetcher = fetcher
        self.now = now or dt.datetime.now(dt.timezone.utc)
        self.report = Report()
        self.visited: dict[str, str | None] = {}
        self.progress = Progress(files_total=1)  # the target
        self.on_progress = on_progress

    def expect(self, files: int) -> None:
        self.progress.files_total += files

    def done(self, target: str) -> None:
        """One file expected was read (or failed): tell ``on_progress``."""
        self.progress.files_done += 1
        self.progress.current = target
        if self.on_progress is not None:
            self.on_progress(self.progress)

    @property
    def fetcher(self) -> Fetcher:
        if self._fetcher is None:
            self._fetcher = HttpFetcher()
        return self._fetcher

    def new_file(self, target: str) -> FileReport:
        file = FileReport(target, max_findings=self.max_findings, ignored=self.ignored)
        self.report.files.append(file)
        return file

    def check(
        self, chunks: Iterable[bytes], file: FileReport, file_url: str | None
    ) -> list[tuple[str, int]]:
        context = Context(file_url=file_url, now=self.now)
        payload = Payload(chunks, file)
        try:
            parser.check(payload, file, context)
        finally:
            if file.kind != "sitemapindex":
                self.progress.urls += file.entries
        file.uncompressed_bytes = payload.total
        return context.children

    def validate_url(self, url: str, *, depth: int) -> FileReport:
        fetched = self.fetcher.fetch(url)  # FetchError before any report exists
        file = self.new_file(url)
        for status, source, target in fetched.redirects:
            file.add("SM701", f"HTTP {status} from {source} to {target}", url=source)
        if fetched.left_origin is not None:
            status, source, target = fetched.left_origin
            file.add("SM703", f"HTTP {status} from {source} to {target}: not fetched", url=target)
            fetched.close()
            self.visited[url] = None
            self.done(url)
            return file
        content_type = (fetched.content_type or "").split(";")[0].strip().lower()
        if content_type not in ACCEPTED_CONTENT_TYPES and not content_type.endswith("+xml"):
            file.add("SM702", f"Content-Type {fetched.content_type or '(none)'}", url=url)
        try:
            children = self.check(fetched.chunks, file, fetched.final_url)
        except FetchError:
            self.report.files.remove(file)
            raise
        finally:
            fetched.close()
        self.visited[url] = file.kind
        # A child listed under the URL another one redirected to is not fetched again.
        self.visited[fetched.final_url] = file.kind
        self.follow_children(file, children, fetched.final_url, depth=depth, local_directory=None)
        return file

    def follow_children(
        self,
        file: FileReport,
        children: list[tuple[str, int]],
        index_url: str | None,
        *,
        depth: int,
        local_directory: Path | None,
    ) -> None:
        """Count ``file`` as read, then validate the sitemaps it lists (if an
        index, with ``index_url`` its URL)."""
        if not self.follow or file.kind != "sitemapindex" or index_url is None:
            self.done(file.target)
            return
        scope = url_scope(index_url)
        if depth < protocol.MAX_INDEX_DEPTH:
            coming = {loc for loc, _ in children if _in_scope(loc, scope) is not None}
            self.expect(len(coming - self.visited.keys()))
        self.done(file.target)
        for loc, line in children:
            path = _in_scope(loc, scope)
            if path is None:
                continue  # reported as SM310 or SM312: never read off the index's scope
            if loc in self.visited:
                if self.visited[loc] == "sitemapindex":
                    file.add("SM602", "lists an index (already validated)", line=line, url=loc)
                continue
            if depth >= protocol.MAX_INDEX_DEPTH:
                continue
            self.visited[loc] = None
            try:
                child_file = self.follow_child(
                    file, loc, line, path, scope[1], local_directory, depth
                )
            except (UnreadableTarget, FetchError, OSError) as exc:
                file.add("SM601", str(exc), line=line, url=loc)
                self.done(loc)
                continue
            if child_file is not None and child_file.kind == "sitemapindex":
                file.add("SM602", "lists another sitemap index", line=line, url=loc)

    def follow_child(
        self,
        file: FileReport,
        loc: str,
        line: int,
        path: str,
        directory: str,
        local_directory: Path | None,
        depth: int,
    ) -> FileReport | None:
        """Validate an index's child: fetched, or read beside a local index
        (None, reported as SM603, when it is not there)."""
        if local_directory is None:
            return self.validate_url(loc, depth=depth + 1)
        child_path = _local_child(local_directory, path[len(directory) :])
        if not child_path.exists():
            # Not on disk beside the index: unchecked, not broken.
            file.add("SM603", f"{child_path} does not exist", line=line, url=loc)
            self.done(loc)
            return None
        return self.validate_path(child_path, published_at=loc, depth=depth + 1)

    def validate_path(self, path: Path, *, published_at: str | None, depth: int) -> FileReport:
        try:
            handle = path.open("rb")
        except OSError as exc:
            raise UnreadableTarget(f"cannot read {path}: {exc.strerror or exc}") from exc
        file = self.new_file(str(path))
        with handle:
            children = self.check(iter(partial(handle.read, CHUNK_SIZE), b""), file, published_at)
        if published_at:
            self.visited[published_at] = file.kind
        self.follow_children(file, children, published_at, depth=depth, local_directory=path.parent)
        return file


def _in_scope(loc: str, scope: tuple[tuple[str, str], str]) -> str | None:
    """The normalised path of an index's child ``loc`` when it is on the
    index's origin and at or below its directory (``scope``), else None."""
    origin, directory = scope
    if url_origin(loc) != origin:
        return None  # never fetch another host on an index's word
    path = normalized_path(urlsplit(loc).path)
    return path if path.startswith(directory) else None


def _local_child(directory: Path, relative: str) -> Path:
    """The file ``relative`` (a normalised URL path below the index's) names in
    the index's local ``directory``; UnreadableTarget when it resolves outside
    it (through a symbolic link) or cannot be a file name."""
    path = directory / relative
    try:
        inside = path.resolve().is_relative_to(directory.resolve())
    except (OSError, ValueError) as exc:  # a NUL byte, a symbolic link loop
        raise UnreadableTarget(f"cannot read {path}: {exc}") from exc
    if not inside:
        raise UnreadableTarget(f"{path} leads outside {directory}: not read")
    return path


#: What a target that is a URL starts with (RFC 3986 scheme, then "://").
_URL_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def _url_scheme(value: str) -> str | None:
    """The scheme of a target that is a URL (lower case); None for a path."""
    match = _URL_RE.match(value)
    return match.group(1).lower() if match else None


def validate(
    target: Target,
    *,
    base_url: str | None = None,
    follow: bool = True,
    ignore: Iterable[str] = (),
    max_findings: int | None = DEFAULT_MAX_FINDINGS,
    fetcher: Fetcher | None = None,
    now: dt.datetime | None = None,
    allow_hosts: Iterable[str] = (),
    on_progress: Callable[[Progress], None] | None = None,
) -> Report:
    """Validate a sitemap, a sitemap index (and what it lists) or a text sitemap.
    ``target`` is the content (``bytes``), an open binary file (stdin), a path,
    or an http(s) URL. An index is followed for a path (to the files beside
    it, given ``base_url``) and for a URL; content given directly is checked
    alone, so a test never reaches the network by accident. ``base_url`` is
    the URL a local file or bytes are published at: it enables the host and
    directory rules. ``ignore`` drops rule ids,
    ``max_findings`` bounds the findings kept per file (all are counted).
    ``fetcher`` replaces urllib (e.g. ``SiteFetcher``); ``now`` pins
    the clock for the future-lastmod and news-window rules.

    A URL's fetches stay on its origin (a redirect elsewhere is reported as
    ``SM703``, not followed) and refuse hosts with private, loopback or
    link-local addresses, except the URL's own host and ``allow_hosts``
    (these apply to the default fetcher; an ``HttpFetcher`` passed as
    ``fetcher`` has its own ``allow_hosts``).

    Raises ``UnreadableTarget`` when the target itself cannot be read (a URL
    of another scheme than http(s) included), and ``UnknownRule`` (a
    ``ValueError``) when ``ignore`` names no rule. ``on_progress`` is called
    with a ``Progress`` after each file (an index's children included).
    """
    name = os.fspath(target) if isinstance(target, (str, os.PathLike)) else ""
    scheme = _url_scheme(name)
    if scheme is not None:
        if scheme not in ("http", "https"):
            raise UnreadableTarget(
                f"cannot read {name}: unsupported URL scheme {scheme!r} (http and https only)"
            )
        if fetcher is None:
            own_host = urlsplit(name).hostname
            fetcher = HttpFetcher(allow_hosts=(*named_hosts([own_host]), *allow_hosts))
    run = _Run(follow, ignore, max_findings, fetcher, now, on_progress)
    if isinstance(target, bytes):
        file = run.new_file(base_url or "<bytes>")
        run.check(iter((target,)), file, base_url)
        run.done(file.target)
    elif isinstance(target, (str, os.PathLike)):
        if scheme is not None:
            try:
                run.validate_url(name, depth=1)
            except FetchError as exc:
                raise UnreadableTarget(str(exc)) from exc
        else:
            run.validate_path(Path(name), published_at=base_url, depth=1)
    else:
        file = run.new_file(base_url or str(getattr(target, "name", None) or "<stream>"))
        run.check(iter(partial(target.read, CHUNK_SIZE), b""), file, base_url)
        run.done(file.target)
    return run.report


def site_index_url() -> str:
    """The absolute URL of this site's index, from BASE_URL or the Sites framework."""
    return site_context().absolute(reverse("sitemaps_plus:index"))


def validate_site(
    *,
    follow: bool = True,
    ignore: Iterable[str] = (),
    max_findings: int | None = DEFAULT_MAX_FINDINGS,
    now: dt.datetime | None = None,
    include_text: bool = True,
    progress: Callable[[str], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> Report:
    """Validate this site's sitemaps, rendered in-process through the real views.
    The index is fetched with ``SiteFetcher`` and followed to every
    section file; with ``include_text`` each file's ``.txt`` twin is checked too.
    ``progress`` is called with each URL as it is fetched (the admin's
    background run reports how far it got); ``on_progress`` with a
    ``Progress`` after each file, as for ``validate()``.
    """
    index_url = site_index_url()
    fetcher = SiteFetcher(index_url, progress=progress)
    run = _Run(follow, ignore, max_findings, fetcher, now, on_progress)
    try:
        run.validate_url(index_url, depth=1)
    except FetchError as exc:
        raise UnreadableTarget(str(exc)) from exc
    if include_text and follow:
        # /sitemap.txt holds every URL when they fit in one file; a 404 is normal.
        all_urls = None
        with contextlib.suppress(NoReverseMatch):
            all_urls = urljoin(index_url, reverse("sitemaps_plus:text"))
        twins = [
            file
            for file in run.report.files
            if file.kind == "urlset" and file.target.endswith(".xml") and file.target != all_urls
        ]
        run.expect(len(twins) + (all_urls is not None))
        if all_urls is not None:
            try:
                run.validate_url(all_urls, depth=protocol.MAX_INDEX_DEPTH)
            except FetchError:
                run.done(all_urls)
        for file in twins:
            text_url = file.target[: -len(".xml")] + ".txt"
            try:
                run.validate_url(text_url, depth=protocol.MAX_INDEX_DEPTH)
            except FetchError as exc:
                # On the .xml file whose twin it is, not on the index.
                file.add("SM601", str(exc), url=text_url)
                run.done(text_url)
    return run.report


def assert_valid_sitemap(
    target: Target | None = None,
    *,
    fail_level: FailLevel = "error",
    base_url: str | None = None,
    follow: bool = True,
    ignore: Iterable[str] = (),
    max_findings: int | None = DEFAULT_MAX_FINDINGS,
    fetcher: Fetcher | None = None,
    now: dt.datetime | None = None,
) -> Report:
    """Validate ``target`` (or, when None, this site's sitemaps) and raise
    ``AssertionError`` listing every finding at or above ``fail_level``.

    The other arguments are those of ``validate()`` (``base_url`` and
    ``fetcher`` apply to a target only). Meant for a project's own tests::

        def test_sitemaps(self):
            assert_valid_sitemap()  # the whole site, in-process
            assert_valid_sitemap(b"<urlset ...>", fail_level="warning")
    """
    if target is None:
        report = validate_site(follow=follow, ignore=ignore, max_findings=max_findings, now=now)
    else:
        report = validate(
            target,
            base_url=base_url,
            follow=follow,
            ignore=ignore,
            max_findings=max_findings,
            fetcher=fetcher,
            now=now,
        )
    if report.fails(fail_level):
        threshold = Severity(fail_level).rank
        lines = [
            f"{file.target}: {finding}"
            for file in report.files
            for finding in file.findings
            if finding.severity.rank >= threshold
        ]
        omitted = sum(file.omitted for file in report.files)
        if omitted:
            lines.append(f"... and {omitted} more not kept (max_findings)")
        raise AssertionError(
            f"sitemap validation failed at level {fail_level!r}:\n  " + "\n  ".join(lines)
        )
    return report
