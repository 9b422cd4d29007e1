"""Static builds: every sitemap file written to a storage, atomically and incrementally.

``build()`` renders each registered section's files and the index, and writes
them to a Django storage (``storage.get_build_storage``):

- **Atomic.** Section files first, each replaced atomically
  (``storage.write_atomic``) under its final name; the index only after all of
  them; files the new index no longer lists are removed last. A crawler
  never reads an index naming a missing or half-written file, and a build that
  fails or is killed leaves the previous set intact (the files it already
  replaced are complete, and the old index still names only existing files).
- **One at a time.** A build holds a lock for its whole run (``build_lock``:
  an exclusive ``flock`` on a lock file in a ``FileSystemStorage``, else a
  lock in the sitemap cache, renewed as files are written); a second build
  raises ``BuildRunning`` instead of interleaving its files with the first's.
- **Index lastmods never lag.** Before any file is replaced, an index naming
  only the files that exist already is written with each file's newer
  lastmod, so a build killed between replacing files and writing the final
  index leaves an index that does not under-state any file's lastmod.
  Temporary files a killed build left (``.sitemap-*.tmp``) are removed by
  the next build.
- **Incremental.** A manifest (``sitemaps-manifest.json``) holds each file's
  SHA-256; a file whose new content hashes the same is not rewritten (nor
  compressed), unless its ``.gz`` copy is missing. After one row changes, only
  its page and the index (whose lastmod moved) are written. With ``CACHE`` on,
  a model section file's fingerprint (``layout.file_fingerprint``: its key
  range's figures and the version tokens of its blocks) is kept too, and a
  file whose fingerprint did not move is not rendered at all. A build without
  gzip deletes the ``.gz`` copies an earlier one left, which a server
  preferring them (nginx ``gzip_static``) would send instead of new content.

``generate_from_urls()`` is the generator mode: a plain list of URLs to
sitemap files (XML or text), split at 50,000 URLs or 52,428,800 bytes, with an
index over several XML files.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import IO, Any

from django.core.files.storage import FileSystemStorage, Storage
from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus import names, pagination, protocol, xml
from django_sitemaps_plus.cache import Measured, gzip_chunks
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.lastmod import format_w3c
from django_sitemaps_plus.location import SiteContext, site_context, to_uri
from django_sitemaps_plus.storage import (
    COPY_CHUNK,
    get_build_storage,
    read_bytes,
    storage_name,
    write_atomic,
    write_bytes,
)

logger = logging.getLogger("django_sitemaps_plus")

MANIFEST_NAME = "sitemaps-manifest.json"
INDEX_NAME = "sitemap.xml"
LOCK_NAME = ".sitemaps-build.lock"
#: Seconds a cache build lock lives without renewal (a killed build's lock
#: expires); renewed each time a file is written.
CACHE_LOCK_SECONDS = 600
#: A temporary file of ``storage.write_atomic`` (``.<name>.<hex>.tmp``).
_TEMP_FILE_RE = re.compile(r"\.sitemap.*\.[0-9a-f]{32}\.tmp")


class BuildRunning(RuntimeError):
    """Another build of the same storage holds the build lock."""


@contextmanager
def build_lock(storage: Storage, prefix: str) -> Iterator[Callable[[], None]]:
    """Hold the build lock of ``storage``/``prefix``; yields a ``renew()``.

    A ``FileSystemStorage`` is locked with ``flock`` on a file beside the
    built files: the kernel frees it when the process dies, however it dies.
    Other storages (S3...) are locked in the sitemap cache (``cache.add``),
    with a timeout renewed as files are written, so a killed build's lock
    expires; the cache must be shared by every machine that builds.
    """
    if isinstance(storage, FileSystemStorage):
        import fcntl

        path = storage.path(storage_name(LOCK_NAME, prefix))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a+") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BuildRunning(
                    f"Another build_sitemaps is writing to {os.path.dirname(path)} "
                    f"(it holds {path})."
                ) from None
            try:
                yield lambda: None
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return
    from django_sitemaps_plus.cache import get_cache

    cache = get_cache()
    key = f"sitemaps_plus:build:{storage.__class__.__name__}:{storage_name('', prefix)}"
    token = uuid.uuid4().hex
    if not cache.add(key, token, timeout=CACHE_LOCK_SECONDS):
        raise BuildRunning(
            f"Another build_sitemaps is writing to this storage (cache lock {key!r}; it "
            f"expires {CACHE_LOCK_SECONDS} s after its holder last wrote a file)."
        )

    def renew() -> None:
        cache.touch(key, CACHE_LOCK_SECONDS)

    try:
        yield renew
    finally:
        if cache.get(key) == token:
            cache.delete(key)


def _remove_stale_temporaries(storage: Storage, prefix: str) -> list[str]:
    """Delete the temporary files a killed build left (we hold the lock)."""
    if not isinstance(storage, FileSystemStorage):
        return []  # object stores publish uploads whole: no temporaries
    directory = storage.path(storage_name("", prefix) or ".")
    removed = []
    try:
        listed = os.listdir(directory)
    except FileNotFoundError:
        return []
    for name in listed:
        if _TEMP_FILE_RE.fullmatch(name):
            os.unlink(os.path.join(directory, name))
            removed.append(name)
    if removed:
        logger.warning("Removed %d temporary file(s) a killed build left.", len(removed))
    return removed


def _lastmod_value(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


Progress = Callable[[int, int, str], None]


@dataclass
class BuildResult:
    """What a build did, by file name (relative to the build folder)."""

    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    urls: int = 0
    seconds: float = 0.0

    @property
    def files(self) -> int:
        return len(self.written) + len(self.skipped)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "files": self.files, "seconds": round(self.seconds, 3)}


def _file_loc(site: SiteContext, section: str, page: int, ext: str) -> str:
    name = "section" if ext == "xml" else "section_txt"
    try:
        path = reverse(f"sitemaps_plus:{name}", kwargs={"section": section, "page": page})
    except NoReverseMatch:
        # The app's URLs are not included: files are served from the site root.
        path = f"/{storage_name(names.file_name(section, page, ext))}"
    return site.absolute(path)


class _Writer:
    """Writes files that changed (by SHA-256 against the manifest), counts the rest."""

    def __init__(
        self,
        storage: Storage,
        prefix: str,
        gzip: bool,
        old: dict[str, Any],
        result: BuildResult,
        renew: Callable[[], None] = lambda: None,
    ) -> None:
        self.storage = storage
        self.prefix = prefix
        self.gzip = gzip
        self.old = old
        self.new: dict[str, Any] = {}
        self.result = result
        self.renew = renew

    def write(self, name: str, chunks: Iterable[bytes], **info: Any) -> None:
        self.renew()
        measured = Measured(chunks)
        with tempfile.TemporaryFile() as spool:
            for chunk in measured:
                spool.write(chunk)
            sha = measured.hexdigest()
            self.new[name] = {"sha256": sha, "bytes": measured.size, "gzip": self.gzip, **info}
            before = self.old.get(name)
            path = storage_name(name, self.prefix)
            if not self.gzip:
                # A .gz of older content would be served by nginx's gzip_static.
                self._remove_gzip(before, path)
            if self._unchanged(before, sha, path):
                self.result.skipped.append(name)
                return
            if self.gzip:
                # Compressed only now: an unchanged file is never compressed.
                with tempfile.TemporaryFile() as zipped:
                    spool.seek(0)
                    for piece in gzip_chunks(iter(partial(spool.read, COPY_CHUNK), b"")):
                        zipped.write(piece)
                    # The .gz first: a server preferring it never finds it older.
                    write_atomic(self.storage, path + ".gz", zipped)
            write_atomic(self.storage, path, spool)
            self.result.written.append(name)

    def kept(self, name: str, fingerprint: str | None, **info: Any) -> bool:
        """Whether ``name`` need not be rendered at all: the manifest holds
        it with this ``fingerprint`` (``layout.file_fingerprint``) and the
        storage has it as this build would write it (with its .gz, or
        without one). Then it is kept in the new manifest as it was."""
        before = self.old.get(name)
        if (
            fingerprint is None
            or not isinstance(before, dict)
            or before.get("fingerprint") != fingerprint
            or bool(before.get("gzip")) != self.gzip
            or not self._unchanged(
                before, before.get("sha256", ""), storage_name(name, self.prefix)
            )
        ):
            return False
        self.renew()
        self.new[name] = {**before, **info, "fingerprint": fingerprint}
        self.result.skipped.append(name)
        return True

    def _unchanged(self, before: Any, sha: str, path: str) -> bool:
        """Whether the storage holds this content already (with its .gz when gzipping)."""
        if not isinstance(before, dict) or before.get("sha256") != sha:
            return False
        if self.gzip and not (before.get("gzip") and self.storage.exists(path + ".gz")):
            return False
        return self.storage.exists(path)

    def _remove_gzip(self, before: Any, path: str) -> None:
        """Delete the .gz an earlier build with gzip on may have left beside ``path``."""
        # A manifest entry without gzip: the build that wrote it removed the .gz.
        if isinstance(before, dict) and not before.get("gzip"):
            return
        if self.storage.exists(path + ".gz"):
            self.storage.delete(path + ".gz")


def _stylesheet_href(storage: Storage, prefix: str) -> str | None:
    """Where built files find the XSL stylesheet: the app's URL when its URLs
    are included, else a copy written beside them (None when it is off)."""
    from django_sitemaps_plus.stylesheet import XSL

    if not conf.STYLESHEET:
        return None
    try:
        return reverse("sitemaps_plus:stylesheet")
    except NoReverseMatch:
        name = storage_name("sitemap.xsl", prefix)
        write_bytes(storage, name, [XSL.encode()])
        return f"/{name}"


def _write_interim_index(
    storage: Storage,
    prefix: str,
    gzip: bool,
    site: SiteContext,
    previous: dict[str, Any],
    plan: list[tuple[Any, Any]],
    stylesheet: str | None = None,
) -> bool:
    """Before files are replaced: an index of the files that exist already,
    each with the later of its old and new lastmod. Written only when some
    lastmod moves forward; returns whether it was written.

    A build killed after replacing some files then leaves an index whose
    lastmods are never older than those files' (at worst newer than a file
    not rewritten yet, which costs a crawler one needless fetch).
    """
    planned = {names.file_name(s.get_name(), p.number): p.lastmod for s, p in plan}
    entries: list[str] = []
    moved = False
    for name in sorted(previous):
        match = names.FILE_NAME_RE.fullmatch(name)
        info = previous[name]
        if match is None or match["ext"] != "xml" or not isinstance(info, dict):
            continue
        old_text = info.get("lastmod")
        old_value = _lastmod_value(old_text)
        new_value = planned.get(name)
        new_text = format_w3c(new_value) if new_value is not None else None
        lastmod = old_text
        if new_text and (old_value is None or (_lastmod_value(new_text) or old_value) > old_value):
            lastmod, moved = new_text, True
        loc = xml.escape(_file_loc(site, match[1], int(match[2]), "xml"))
        urls = info.get("urls") if stylesheet else None
        entries.append(xml.sitemap_entry(loc, lastmod, urls if isinstance(urls, int) else None))
    if not moved or not entries:
        return False
    path = storage_name(INDEX_NAME, prefix)
    if gzip:
        write_bytes(storage, path + ".gz", gzip_chunks(xml.stream_index(entries, stylesheet)))
    write_bytes(storage, path, xml.stream_index(entries, stylesheet))
    return True


def _built_files(storage: Storage, prefix: str) -> set[str]:
    """The built section files in the storage's build folder, manifest or not."""
    try:
        _, listed = storage.listdir(storage_name("", prefix) or ".")
    except (FileNotFoundError, NotImplementedError, OSError):
        return set()
    return {
        name.removesuffix(".gz")
        for name in listed
        if names.FILE_NAME_RE.fullmatch(name.removesuffix(".gz"))
    }


def _fingerprint(section: Any, page: Any, site: SiteContext, *context: object) -> str | None:
    """A model section file's fingerprint (``layout.file_fingerprint``), or
    None for a file of another section: it is rendered on every build."""
    from django_sitemaps_plus import layout
    from django_sitemaps_plus.sections import ModelSection

    span = page.prepared
    if not (
        isinstance(section, ModelSection)
        and section.files_keyed_by_blocks()
        and isinstance(span, pagination.Span)
    ):
        return None
    return layout.file_fingerprint(section, span, site, *context)


def _load_manifest(storage: Storage, prefix: str) -> dict[str, Any]:
    data = read_bytes(storage, storage_name(MANIFEST_NAME, prefix))
    if not data:
        return {}
    try:
        manifest = json.loads(data)
    except ValueError:
        logger.warning("Ignoring an unreadable %s: rebuilding every file.", MANIFEST_NAME)
        return {}
    files = manifest.get("files") if isinstance(manifest, dict) else None
    return files if isinstance(files, dict) else {}


def build(
    storage: Storage | None = None,
    *,
    site: SiteContext | None = None,
    gzip: bool | None = None,
    text: bool = False,
    prefix: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> BuildResult:
    """Write every registered section's files and the index to ``storage``.

    ``force`` rewrites files whose content did not change, and removes every
    built file the new index does not list, whether a manifest names it or
    not. ``progress`` is called as ``progress(done, total, name)`` after each
    file. Raises ``BuildRunning`` when another build holds the lock.
    """
    storage = storage if storage is not None else get_build_storage()
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    with build_lock(storage, prefix) as renew:
        return _build(
            storage,
            site=site,
            gzip=gzip,
            text=text,
            prefix=prefix,
            force=force,
            progress=progress,
            renew=renew,
        )


def _build(
    storage: Storage,
    *,
    site: SiteContext | None,
    gzip: bool | None,
    text: bool,
    prefix: str,
    force: bool,
    progress: Progress | None,
    renew: Callable[[], None],
) -> BuildResult:
    from django_sitemaps_plus.registry import site as registry
    from django_sitemaps_plus.signals import sitemaps_built

    started = time.monotonic()
    site = site or site_context(None)
    gzip = conf.BUILD_GZIP if gzip is None else gzip
    result = BuildResult()
    _remove_stale_temporaries(storage, prefix)
    previous = _load_manifest(storage, prefix)
    old = {} if force else dict(previous)
    writer = _Writer(storage, prefix, gzip, old, result, renew)

    plan = [(section, page) for section in registry for page in section.index_pages(site)]
    if len(plan) > protocol.MAX_SITEMAPS_PER_INDEX:
        # Before anything is rendered: the index lists one entry per file.
        raise ValueError(
            f"The index would list {len(plan):,} files; the protocol allows "
            f"{protocol.MAX_SITEMAPS_PER_INDEX:,}."
        )
    stylesheet = _stylesheet_href(storage, prefix)
    if _write_interim_index(storage, prefix, gzip, site, previous, plan, stylesheet):
        # The final index must be written even if it equals the old one.
        old.pop(INDEX_NAME, None)
    total = len(plan) * (2 if text else 1) + 1
    done = 0
    entries: list[str] = []
    for section, page in plan:
        name = section.get_name()
        file_name = names.file_name(name, page.number)
        info: dict[str, Any] = {"urls": page.url_count, "lastmod": format_w3c(page.lastmod)}
        fingerprint = _fingerprint(section, page, site, stylesheet, "xml")
        if not writer.kept(file_name, fingerprint, **info):
            writer.write(
                file_name,
                xml.stream_urlset(
                    section.page_entries(page.number, site),
                    section.namespaces(),
                    label=f"Sitemap section {name!r}",
                    stylesheet=stylesheet,
                ),
                fingerprint=fingerprint,
                **info,
            )
        done += 1
        if progress:
            progress(done, total, file_name)
        if text:
            text_name = names.file_name(name, page.number, "txt")
            fingerprint = _fingerprint(section, page, site, "txt")
            if not writer.kept(text_name, fingerprint, urls=page.url_count):
                writer.write(
                    text_name,
                    xml.stream_text(section.page_locations(page.number, site)),
                    urls=page.url_count,
                    fingerprint=fingerprint,
                )
            done += 1
            if progress:
                progress(done, total, text_name)
        loc = xml.escape(_file_loc(section.own_site(site), name, page.number, "xml"))
        count = page.url_count if stylesheet else None
        entries.append(xml.sitemap_entry(loc, format_w3c(page.lastmod), count))
        result.urls += page.url_count
    if entries:
        # The index last: every file it names is complete by now.
        writer.write(INDEX_NAME, xml.stream_index(entries, stylesheet), files=len(entries))
    done += 1
    if progress:
        progress(done, total, INDEX_NAME)

    manifest = {"version": 1, "base_url": site.base_url, "files": writer.new}
    write_bytes(
        storage,
        storage_name(MANIFEST_NAME, prefix),
        [json.dumps(manifest, indent=1, sort_keys=True).encode()],
    )
    # Removed last: the index on the storage no longer names these files.
    unlisted = set(previous) | (_built_files(storage, prefix) if force else set())
    for name in sorted(unlisted - set(writer.new)):
        path = storage_name(name, prefix)
        for stale in (path, path + ".gz"):
            if storage.exists(stale):
                storage.delete(stale)
        result.removed.append(name)
    result.seconds = time.monotonic() - started
    sitemaps_built.send(sender=None, result=result)
    return result


# Generator mode: a list of URLs to sitemap files ------------------------------


class UrlListError(ValueError):
    """A list of URLs that cannot become a sitemap at all."""


@dataclass
class Generated:
    """What ``generate_from_urls`` wrote."""

    files: list[str]
    urls: int
    rejected: list[tuple[int, str, str]]  # line number, text, why
    robots_lines: list[str]


def _read_urls(lines: Iterable[str], rejected: list[tuple[int, str, str]]) -> Iterator[str]:
    origin: tuple[str, str] | None = None
    seen: set[str] = set()
    for number, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            url = to_uri(text)
        except ValueError as exc:
            rejected.append((number, text, str(exc)))
            continue
        problem = protocol.loc_problem(url)
        if problem is None:
            from urllib.parse import urlsplit

            parts = urlsplit(url)
            here = (parts.scheme, parts.netloc.lower())
            if origin is None:
                origin = here
            elif here != origin:
                problem = (
                    f"is on {here[0]}://{here[1]}, not {origin[0]}://{origin[1]} like the first "
                    "URL (a sitemap lists one scheme and host)"
                )
            elif url in seen:
                problem = "is a duplicate"
        if problem is not None:
            rejected.append((number, text, problem))
            continue
        seen.add(url)
        yield url


def generate_from_urls(
    lines: Iterable[str],
    storage: Storage,
    *,
    fmt: str = "xml",
    lastmod: str | None = None,
    url_prefix: str = "/",
    limit: int = protocol.MAX_URLS_PER_FILE,
) -> Generated:
    """Sitemap files for a plain list of absolute URLs (one per line).

    Up to ``limit`` URLs (and 52,428,800 bytes) per file: one ``sitemap.xml``
    (or ``sitemap.txt``) when they fit, else ``sitemap-1.xml``, ... and, for
    XML, an index ``sitemap.xml`` naming them (text files cannot be indexed:
    each gets its own robots.txt line). ``lastmod`` (W3C Datetime) is given
    to every URL. ``url_prefix`` is the path the files are served under.
    """
    if fmt not in ("xml", "txt"):
        raise UrlListError(f"format {fmt!r}: 'xml' or 'txt'")
    if lastmod is not None and not protocol.is_w3c_datetime(lastmod):
        raise UrlListError(f"lastmod {lastmod!r} is not a W3C Datetime (e.g. 2024-05-01)")
    if not url_prefix.startswith("/"):
        url_prefix = "/" + url_prefix
    if not url_prefix.endswith("/"):
        url_prefix += "/"
    rejected: list[tuple[int, str, str]] = []
    parts: list[IO[bytes]] = []
    origin = ""
    count = 0

    def new_part() -> IO[bytes]:
        spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
        if fmt == "xml":
            spool.write(xml.XML_DECLARATION.encode())
            spool.write(f'<urlset xmlns="{protocol.SITEMAP_NS}">\n'.encode())
        parts.append(spool)
        return spool

    closing = b"</urlset>\n" if fmt == "xml" else b""
    current: IO[bytes] | None = None
    in_part = 0
    part_bytes = 0
    for url in _read_urls(lines, rejected):
        if not origin:
            from urllib.parse import urlsplit

            split = urlsplit(url)
            origin = f"{split.scheme}://{split.netloc}"
        if fmt == "xml":
            entry = xml.url_entry(xml.escape(url), lastmod).encode()
        else:
            entry = f"{url}\n".encode()
        if (
            current is None
            or in_part >= limit
            or (part_bytes + len(entry) + len(closing) > protocol.MAX_FILE_BYTES)
        ):
            if current is not None:
                current.write(closing)
            current = new_part()
            in_part = 0
            part_bytes = current.tell()
        current.write(entry)
        in_part += 1
        part_bytes += len(entry)
        count += 1
    if current is None:
        raise UrlListError("no valid URL in the list")
    current.write(closing)

    files: list[str] = []
    robots: list[str] = []
    try:
        if len(parts) == 1:
            name = f"sitemap.{fmt}"
            write_atomic(storage, name, parts[0])
            files.append(name)
            robots.append(f"Sitemap: {origin}{url_prefix}{name}")
        else:
            entries: list[str] = []
            for number, part in enumerate(parts, 1):
                name = f"sitemap-{number}.{fmt}"
                write_atomic(storage, name, part)
                files.append(name)
                entries.append(xml.sitemap_entry(xml.escape(f"{origin}{url_prefix}{name}"), None))
                if fmt == "txt":
                    robots.append(f"Sitemap: {origin}{url_prefix}{name}")
            if fmt == "xml":
                write_bytes(storage, INDEX_NAME, xml.stream_index(entries))
                files.append(INDEX_NAME)
                robots.append(f"Sitemap: {origin}{url_prefix}{INDEX_NAME}")
    finally:
        for part in parts:
            part.close()
    return Generated(files, count, rejected, robots)
