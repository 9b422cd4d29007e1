"""Static builds: every sitemap file written to a storage, atomically and incrementally.

``build()`` renders each registered section's files and the index, and writes
them to a Django storage (``storage.get_build_storage``). A build is a plan of
independent file jobs plus one index:

- **Plan** (``make_plan``), once: each file's section, page, URL count,
  lastmod and key range, as the index lists them; kept in the storage
  (``PLAN_DIR``) until the index is written.
- **File jobs** (``run_job``), in any order and any process that reaches the
  storage: one file (and its ``.txt``) rendered from the planned key range,
  replaced atomically, and a record of it written to the storage. One
  process runs them in order; ``workers`` runs them in forked processes
  (``build(jobs=N)``), ``tasks`` on Django's Tasks framework.
- **Index** (``finish``), only when every job of the plan has its record. A
  failed or killed build raises ``BuildFailed`` naming the files not built;
  its plan stays, and the next build with the same options runs only the jobs
  without a record.

Records live in the storage, not the cache: every machine that builds must
reach the storage anyway, and a storage does not evict.

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
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import IO, Any, cast

from django.core.files.storage import FileSystemStorage, Storage
from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus import (
    kept_figures,
    layout,
    locks,
    names,
    pagination,
    protocol,
    quiet,
    workers,
    xml,
)
from django_sitemaps_plus.blocks import BlockFigures
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.lastmod import format_w3c
from django_sitemaps_plus.location import to_uri
from django_sitemaps_plus.registry import site as registry
from django_sitemaps_plus.responses import Measured, gzip_chunks
from django_sitemaps_plus.sections import ModelSection, PageInfo
from django_sitemaps_plus.signals import sitemaps_built
from django_sitemaps_plus.sites import SiteContext, site_context
from django_sitemaps_plus.storage import (
    COPY_CHUNK,
    get_build_storage,
    read_bytes,
    storage_name,
    write_atomic,
    write_bytes,
)
from django_sitemaps_plus.stylesheet import XSL

logger = logging.getLogger("django_sitemaps_plus")

MANIFEST_NAME = "sitemaps-manifest.json"
INDEX_NAME = "sitemap.xml"
LOCK_NAME = ".sitemaps-build.lock"
#: The folder of a build's plan and of its jobs' records (``BuildPlan``),
#: there until the build's index is written.
PLAN_DIR = ".sitemaps-build"
PLAN_FILE = "plan.json"
GENERATION_FILE = "generation"
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

    key = f"sitemaps_plus:build:{_storage_identity(storage)}:{storage_name('', prefix)}"
    lock = locks.Lock(quiet.get_cache(), key, CACHE_LOCK_SECONDS)
    if not lock.take():
        raise BuildRunning(
            f"Another build_sitemaps is writing to this storage (cache lock {key!r}; it "
            f"expires {CACHE_LOCK_SECONDS} s after its holder last wrote a file)."
        )
    try:
        yield lock.renew
    finally:
        lock.release()


#: Attributes that tell one object store's storage from another's, the same
#: on every machine (never credentials): django-storages' S3 and Google Cloud
#: (``bucket_name``), Azure (``azure_container``); ``location``: the folder in it.
_STORAGE_IDENTITY = ("bucket_name", "azure_container", "location")


def _storage_identity(storage: Storage) -> str:
    """What the cache lock of ``storage`` is named after: two buckets never
    share a lock, the same bucket always does, whichever machine builds."""
    parts = [storage.__class__.__name__]
    parts += [str(value) for a in _STORAGE_IDENTITY if (value := getattr(storage, a, None))]
    return ":".join(parts)


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
    #: Built by an earlier run of the same plan that failed or was killed.
    resumed: list[str] = field(default_factory=list)
    urls: int = 0
    seconds: float = 0.0

    @property
    def files(self) -> int:
        return len(self.written) + len(self.skipped) + len(self.resumed)

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
    planned: dict[str, str | None],
    stylesheet: str | None = None,
) -> bool:
    """Before files are replaced: an index of the files that exist already,
    each with the later of its old and new lastmod (``planned``: each file's
    new lastmod, W3C text). Written only when some lastmod moves forward;
    returns whether it was written.

    A build killed after replacing some files then leaves an index whose
    lastmods are never older than those files' (at worst newer than a file
    not rewritten yet, which costs a crawler one needless fetch).
    """
    entries: list[xml.IndexedFile] = []
    moved = False
    for name in sorted(previous):
        match = names.FILE_NAME_RE.fullmatch(name)
        info = previous[name]
        if match is None or match["ext"] != "xml" or not isinstance(info, dict):
            continue
        old_text = info.get("lastmod")
        old_value = _lastmod_value(old_text)
        new_text = planned.get(name)
        lastmod = old_text
        if new_text and (old_value is None or (_lastmod_value(new_text) or old_value) > old_value):
            lastmod, moved = new_text, True
        urls = info.get("urls")
        loc = _file_loc(site, match[1], int(match[2]), "xml")
        entries.append(xml.IndexedFile(loc, lastmod, urls if isinstance(urls, int) else None))
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


def _load_json(storage: Storage, name: str) -> Any:
    """The JSON document ``name`` of the storage; None when missing or unreadable."""
    data = read_bytes(storage, name)
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def _write_json(storage: Storage, name: str, document: Any, indent: int | None = None) -> None:
    write_bytes(storage, name, [json.dumps(document, indent=indent, sort_keys=True).encode()])


def _load_manifest(storage: Storage, prefix: str) -> dict[str, Any]:
    name = storage_name(MANIFEST_NAME, prefix)
    manifest = _load_json(storage, name)
    if manifest is None and read_bytes(storage, name):
        logger.warning("Ignoring an unreadable %s: rebuilding every file.", MANIFEST_NAME)
    files = manifest.get("files") if isinstance(manifest, dict) else None
    return files if isinstance(files, dict) else {}


# The plan: independent file jobs, then the index ---------------------------------


class BuildFailed(RuntimeError):
    """Some file jobs of a build did not finish: the index was not written,
    the previous set is still served, and a rerun redoes only these files."""

    def __init__(self, files: Sequence[str], reasons: Sequence[str] = ()) -> None:
        self.files = list(files)
        self.reasons = list(reasons)
        shown = ", ".join(self.files[:10]) + (" ..." if len(self.files) > 10 else "")
        why = f" ({'; '.join(self.reasons[:3])})" if self.reasons else ""
        super().__init__(
            f"{len(self.files)} file(s) not built: {shown}{why}. The index was not "
            "written; a rerun builds only the missing files."
        )


@dataclass
class FileJob:
    """One section file of a plan (with its ``.txt`` twin when the plan has
    text files): what identifies its content, and the manifest entries the
    last build left for its files (a file whose new content hashes the same
    is not rewritten)."""

    section: str
    page: int
    urls: int
    lastmod: str | None
    #: The index entry's ``<loc>``.
    loc: str
    #: The key range ``after < key <= last`` of a laid-out file (None: the
    #: section's pages are not key ranges).
    after: int | None = None
    last: int | None = None
    keyed: bool = False
    previous: dict[str, Any] = field(default_factory=dict)
    #: A model section file's fingerprint (``layout.file_fingerprint``),
    #: kept in its files' manifest entries: a job whose files the manifest
    #: holds with this fingerprint is not rendered (None: always rendered).
    fingerprint: str | None = None

    def files(self, text: bool) -> list[str]:
        xml_name = names.file_name(self.section, self.page)
        return [xml_name, names.file_name(self.section, self.page, "txt")] if text else [xml_name]

    @property
    def key(self) -> str:
        """The job's identity: a record with this key holds its files."""
        identity: list[Any] = [
            self.section,
            self.page,
            self.urls,
            self.lastmod,
            self.after,
            self.last,
        ]
        if self.fingerprint is not None:
            # A record of the same range rendered before its rows changed
            # (a slug: no lastmod moved) is not this job's.
            identity.append(self.fingerprint)
        return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:32]


@dataclass
class BuildPlan:
    """A build made once: its file jobs, run in any order by any process
    that reaches the storage, and what the index written after them needs.

    Kept in the storage (``PLAN_NAME``) until its index is written, with a
    record per finished job (``record_name``): a build that failed or was
    killed is resumed by the next one, which runs only the jobs without one.
    """

    generation: str
    base_url: str
    site_key: str
    prefix: str
    gzip: bool
    text: bool
    force: bool
    stylesheet: str | None
    jobs: list[FileJob]
    #: The manifest entry of the index the final index is compared with
    #: (empty: it is written whatever it holds).
    index_previous: dict[str, Any] = field(default_factory=dict)
    #: Every file the last build's manifest names (what the index may drop).
    previous_files: list[str] = field(default_factory=list)
    #: Enqueued on the Tasks framework: the last job writes the index.
    enqueued: bool = False
    #: The folder of its jobs' records: its generation's, or that of the
    #: plan it resumes (a new generation each time: the tasks of a plan
    #: that was taken over find it superseded).
    records: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BuildPlan:
        jobs = [FileJob(**job) for job in data["jobs"]]
        return cls(**{**data, "jobs": jobs})

    def record_name(self, job: FileJob) -> str:
        return storage_name(f"{self.records_folder}/{job.key}.json", self.prefix)

    @property
    def records_folder(self) -> str:
        return f"{PLAN_DIR}/{self.records or self.generation}"

    def resumes(self, other: BuildPlan) -> bool:
        """Whether this plan may take over ``other``'s finished jobs."""
        same = ("base_url", "site_key", "prefix", "gzip", "text", "stylesheet")
        return not self.force and all(getattr(self, f) == getattr(other, f) for f in same)

    def site(self) -> SiteContext:
        """The site the plan was made for, in any process."""
        site = None
        if self.site_key:
            from django.apps import apps

            label, pk = self.site_key.rsplit(":", 1)
            site = apps.get_model(label)._default_manager.get(pk=pk)
        return SiteContext(self.base_url, site)


def _plan_name(prefix: str) -> str:
    return storage_name(f"{PLAN_DIR}/{PLAN_FILE}", prefix)


def load_plan(storage: Storage, prefix: str | None = None) -> BuildPlan | None:
    """The plan of a build that has not written its index yet, if any."""
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    data = _load_json(storage, _plan_name(prefix))
    try:
        return BuildPlan.from_json(data) if isinstance(data, dict) else None
    except (TypeError, KeyError):
        return None


def _key_range(page: Any) -> dict[str, Any]:
    span = page.prepared
    if isinstance(span, pagination.Span):
        return {"after": span.after, "last": span.last, "keyed": True}
    return {}


def _fingerprints(site: SiteContext, *context: object) -> Callable[[Any, Any], str | None]:
    """Each file's fingerprint (``layout.file_fingerprint``), or None for a
    file of a section that is not a model section keyed by blocks: it is
    rendered on every build. A section whose block figures are kept reads
    them once (``kept_figures``: the layout just brought them up to date),
    and its files' figures are summed from them, with no row read."""
    kept: dict[str, Mapping[int, BlockFigures] | None] = {}

    def fingerprint(section: Any, page: Any) -> str | None:
        span = page.prepared
        if not (
            isinstance(section, ModelSection)
            and section.files_keyed_by_blocks()
            and isinstance(span, pagination.Span)
        ):
            return None
        name = section.get_name()
        if name not in kept:
            kept[name] = (
                kept_figures.block_figures(section, site, section.block_width())
                if kept_figures.keeps(section)
                else None
            )
        return layout.file_fingerprint(section, span, site, *context, kept=kept[name])

    return fingerprint


def make_plan(
    storage: Storage,
    *,
    site: SiteContext,
    gzip: bool,
    text: bool,
    prefix: str,
    force: bool,
    enqueued: bool = False,
) -> BuildPlan:
    """Lay out every registered section's files, once, as jobs; write the
    interim index (see the module's docstring) and keep the plan in the
    storage. Resumes the plan of a build that failed or was killed: its
    finished jobs whose files are still the ones planned are not run again."""
    pending = load_plan(storage, prefix)
    if pending is not None and pending.enqueued and enqueued_running(pending):
        raise BuildRunning(
            "An enqueued build of this storage is still running on task workers "
            f"(plan {pending.generation}; it counts as running until "
            f"{CACHE_LOCK_SECONDS} s after its last job finished)."
        )
    _remove_stale_temporaries(storage, prefix)
    previous = _load_manifest(storage, prefix)
    for section in registry:
        # Off the request path: blocks of sections sized by measure are
        # rendered and kept now, so the layout packs them by their bytes.
        layout.measure_blocks(section, site)
    # The files an index lists: none that would have no URL.
    pages = [(section, page) for section in registry for page in section.listed_pages(site)]
    if len(pages) > protocol.MAX_SITEMAPS_PER_INDEX:
        # Before anything is rendered: the index lists one entry per file.
        raise ValueError(
            f"The index would list {len(pages):,} files; the protocol allows "
            f"{protocol.MAX_SITEMAPS_PER_INDEX:,}."
        )
    stylesheet = _stylesheet_href(storage, prefix)
    fingerprint = _fingerprints(site, stylesheet)
    jobs = []
    for section, page in pages:
        name = section.get_name()
        job = FileJob(
            name,
            page.number,
            page.url_count,
            format_w3c(page.lastmod),
            _file_loc(section.own_site(site), name, page.number, "xml"),
            **_key_range(page),
            fingerprint=fingerprint(section, page),
        )
        if not force:
            job.previous = {f: previous[f] for f in job.files(text) if f in previous}
        jobs.append(job)
    planned = {names.file_name(job.section, job.page): job.lastmod for job in jobs}
    interim = _write_interim_index(storage, prefix, gzip, site, previous, planned, stylesheet)
    plan = BuildPlan(
        uuid.uuid4().hex,
        site.base_url,
        site.site_key,
        prefix,
        gzip,
        text,
        force,
        stylesheet,
        jobs,
        # After an interim index the final one must be written even if it
        # equals the old one.
        {} if force or interim or INDEX_NAME not in previous else previous[INDEX_NAME],
        sorted(previous),
        enqueued,
    )
    if pending is not None:
        if plan.resumes(pending):
            plan.records = pending.records or pending.generation
        else:
            _discard_records(storage, pending)
    _write_json(storage, _plan_name(prefix), plan.as_json())
    write_bytes(storage, _generation_name(prefix), [plan.generation.encode()])
    return plan


def _generation_name(prefix: str) -> str:
    return storage_name(f"{PLAN_DIR}/{GENERATION_FILE}", prefix)


def current_generation(storage: Storage, prefix: str) -> str | None:
    """The generation of the plan kept in the storage (a small read: what a
    task checks before it runs a job of a plan that may be superseded)."""
    data = read_bytes(storage, _generation_name(prefix))
    return data.decode() if data else None


def jobs_counter_key(plan: BuildPlan) -> str:
    """The sitemap cache's count of an enqueued plan's finished jobs
    (``tasks``): there while its jobs run, renewed by each."""
    return f"sitemaps_plus:build-jobs:{plan.generation}"


def enqueued_running(plan: BuildPlan) -> bool:
    """Whether the task workers of an enqueued plan still work on it."""
    try:
        return quiet.call(quiet.get_cache(), "get", jobs_counter_key(plan)) is not None
    except quiet.CacheDown:
        # Unknown: the count lives in the cache. The new build takes the plan
        # over (a task of the old one then finds itself superseded and stops).
        logger.warning(
            "Sitemap cache unavailable: enqueued build %s taken over as not running",
            plan.generation,
        )
        return False


def _discard_records(storage: Storage, plan: BuildPlan) -> None:
    for job in plan.jobs:
        name = plan.record_name(job)
        if storage.exists(name):
            storage.delete(name)
    _remove_folder(storage, storage_name(plan.records_folder, plan.prefix))


def _remove_folder(storage: Storage, name: str) -> None:
    """Remove the folder ``name`` with what is left in it: the temporary
    file of a record a killed worker was writing (object stores have no
    folders, and publish an upload whole)."""
    if isinstance(storage, FileSystemStorage):
        shutil.rmtree(storage.path(name), ignore_errors=True)


def _job_record(storage: Storage, plan: BuildPlan, job: FileJob) -> dict[str, Any] | None:
    record = _load_json(storage, plan.record_name(job))
    if isinstance(record, dict) and record.get("key") == job.key:
        return record
    return None


def unfinished_jobs(storage: Storage, plan: BuildPlan) -> list[FileJob]:
    """The jobs of ``plan`` without a record (all of them in a new plan)."""
    return [job for job in plan.jobs if _job_record(storage, plan, job) is None]


def run_job(
    storage: Storage,
    plan: BuildPlan,
    job: FileJob,
    site: SiteContext | None = None,
    renew: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Render one file job (its ``.xml``, and ``.txt`` when the plan has
    text files) to the storage, each file replaced atomically, and record
    what it wrote: the record is what the index step reads."""
    site = site or plan.site()
    section = registry.get(job.section)
    if section is None:
        raise LookupError(f"No sitemap section {job.section!r} is registered here.")
    result = BuildResult()
    writer = _Writer(storage, plan.prefix, plan.gzip, job.previous, result, renew)
    info = None
    if job.keyed and job.last is not None:
        # The key range the plan laid out, whatever layout this process keeps.
        span = pagination.Span(job.page, job.after, job.last, job.urls, None)
        info = PageInfo(job.page, None, job.urls, prepared=span)
    xml_name, *text_name = job.files(plan.text)
    # A file the manifest holds with the job's fingerprint is not rendered.
    extra = {} if job.fingerprint is None else {"fingerprint": job.fingerprint}
    if not writer.kept(xml_name, job.fingerprint, urls=job.urls, lastmod=job.lastmod):
        writer.write(
            xml_name,
            xml.stream_urlset(
                section.page_entries(job.page, site, info),
                section.namespaces(),
                label=f"Sitemap section {job.section!r}",
                stylesheet=plan.stylesheet,
            ),
            urls=job.urls,
            lastmod=job.lastmod,
            **extra,
        )
    if text_name and not writer.kept(text_name[0], job.fingerprint, urls=job.urls):
        writer.write(
            text_name[0],
            xml.stream_text(section.page_locations(job.page, site, info)),
            urls=job.urls,
            **extra,
        )
    record = {
        "key": job.key,
        "files": writer.new,
        "written": result.written,
        "skipped": result.skipped,
    }
    _write_json(storage, plan.record_name(job), record)
    return record


def finish(
    storage: Storage,
    plan: BuildPlan,
    site: SiteContext | None = None,
    *,
    ran: Iterable[str] | None = None,
    renew: Callable[[], None] = lambda: None,
    started: float | None = None,
    result: BuildResult | None = None,
) -> BuildResult:
    """Write the index, when every file job of ``plan`` has its record; then
    the manifest, and remove the files the index no longer lists.

    ``ran``: the keys of the jobs this build ran (the others' files were
    built by an earlier, failed run: reported as resumed). Raises
    ``BuildFailed`` naming the files of the jobs without a record.
    """
    started = time.monotonic() if started is None else started
    site = site or plan.site()
    records = {job.key: _job_record(storage, plan, job) for job in plan.jobs}
    missing = [f for job in plan.jobs if records[job.key] is None for f in job.files(plan.text)]
    if missing:
        raise BuildFailed(missing)
    fresh = None if ran is None else set(ran)
    # ``result``: filled in place (its counts so far are replaced).
    result = result if result is not None else BuildResult()
    result.written.clear()
    result.urls = 0
    new: dict[str, Any] = {}
    entries: list[xml.IndexedFile] = []
    for job in plan.jobs:
        record = cast("dict[str, Any]", records[job.key])
        new.update(record["files"])
        if fresh is None or job.key in fresh:
            result.written.extend(record["written"])
            result.skipped.extend(record["skipped"])
        else:
            result.resumed.extend(job.files(plan.text))
        entries.append(xml.IndexedFile(job.loc, job.lastmod, job.urls))
        result.urls += job.urls
    old = {INDEX_NAME: plan.index_previous} if plan.index_previous else {}
    writer = _Writer(storage, plan.prefix, plan.gzip, old, result, renew)
    writer.new = new
    if entries:
        # The index last: every file it names is complete by now.
        writer.write(INDEX_NAME, xml.stream_index(entries, plan.stylesheet), files=len(entries))
    manifest = {"version": 1, "base_url": site.base_url, "files": writer.new}
    _write_json(storage, storage_name(MANIFEST_NAME, plan.prefix), manifest, indent=1)
    # Removed last: the index on the storage no longer names these files.
    unlisted = set(plan.previous_files)
    if plan.force:
        unlisted |= _built_files(storage, plan.prefix)
    for name in sorted(unlisted - set(writer.new)):
        path = storage_name(name, plan.prefix)
        for stale in (path, path + ".gz"):
            if storage.exists(stale):
                storage.delete(stale)
        result.removed.append(name)
    _discard_records(storage, plan)
    storage.delete(_plan_name(plan.prefix))
    storage.delete(_generation_name(plan.prefix))
    _remove_folder(storage, storage_name(PLAN_DIR, plan.prefix))
    result.seconds = time.monotonic() - started
    sitemaps_built.send(sender=None, result=result)
    _remember_build(storage, plan, result)
    return result


#: Seconds the sitemap cache keeps what the last build did (``last_build_key``).
LAST_BUILD_SECONDS = 90 * 24 * 3600


def last_build_key(storage: Storage, prefix: str) -> str:
    """The sitemap cache's summary of the last build of ``storage``/``prefix``
    (what ``sitemaps_built`` was sent, counted; the admin overview shows it)."""
    return f"sitemaps_plus:last-build:{_storage_identity(storage)}:{storage_name('', prefix)}"


def _remember_build(storage: Storage, plan: BuildPlan, result: BuildResult) -> None:
    """Keep the counts of ``result`` in the sitemap cache; a cache that is
    down loses them, never the build (the manifest has the files)."""
    import contextlib

    summary = {
        "generation": plan.generation,
        "enqueued": plan.enqueued,
        "finished": time.time(),
        "files": result.files,
        "urls": result.urls,
        "written": len(result.written),
        "skipped": len(result.skipped),
        "resumed": len(result.resumed),
        "removed": len(result.removed),
        "seconds": round(result.seconds, 3),
    }
    with contextlib.suppress(quiet.CacheDown):
        key = last_build_key(storage, plan.prefix)
        quiet.call(quiet.get_cache(), "set", key, summary, timeout=LAST_BUILD_SECONDS)


def build(
    storage: Storage | None = None,
    *,
    site: SiteContext | None = None,
    gzip: bool | None = None,
    text: bool = False,
    prefix: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    result: BuildResult | None = None,
    jobs: int = 1,
) -> BuildResult:
    """Write every registered section's files and the index to ``storage``.
    ``force`` rewrites files whose content did not change, and removes every
    built file the new index does not list, whether a manifest names it or
    not. ``progress`` is called as ``progress(done, total, name)`` after each
    file; ``result``, when given, is the ``BuildResult`` filled and returned,
    which ``progress`` may read for the counts so far (files written, URLs).
    ``jobs``: worker processes that render the files (0: one per CPU; see
    ``workers``). Raises ``BuildRunning`` when another build holds the lock,
    ``BuildFailed`` when some files could not be built.
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
            result=result if result is not None else BuildResult(),
            jobs=jobs,
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
    result: BuildResult,
    jobs: int = 1,
) -> BuildResult:
    """Plan, run the jobs that have no record yet, write the index."""
    started = time.monotonic()
    workers.check(storage, jobs)
    site = site or site_context(None)
    gzip = conf.BUILD_GZIP if gzip is None else gzip
    plan = make_plan(storage, site=site, gzip=gzip, text=text, prefix=prefix, force=force)
    todo = unfinished_jobs(storage, plan)
    per_job = 2 if text else 1
    total = len(plan.jobs) * per_job + 1
    done = (len(plan.jobs) - len(todo)) * per_job
    failed: list[FileJob] = []
    errors: list[BaseException] = []
    for job, record, error in workers.run_jobs(run_job, storage, plan, todo, renew, jobs, site):
        if error is not None:
            failed.append(job)
            errors.append(error)
            continue
        assert record is not None  # a job without an error has its record
        # The counts so far, for ``progress`` (``finish`` gives the final ones).
        result.written.extend(record.get("written", ()))
        result.urls += job.urls
        for name in job.files(text):
            done += 1
            if progress:
                progress(done, total, name)
    if failed:
        # Every job without a record: the failed ones, and those not run.
        files = [name for job in unfinished_jobs(storage, plan) for name in job.files(text)]
        reasons = sorted({f"{type(e).__name__}: {e}" for e in errors})
        raise BuildFailed(files, reasons) from errors[0]
    finish(
        storage,
        plan,
        site,
        ran=[job.key for job in todo],
        renew=renew,
        started=started,
        result=result,
    )
    if progress:
        progress(total, total, INDEX_NAME)
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
            entries: list[xml.IndexedFile] = []
            for number, part in enumerate(parts, 1):
                name = f"sitemap-{number}.{fmt}"
                write_atomic(storage, name, part)
                files.append(name)
                entries.append(xml.IndexedFile(f"{origin}{url_prefix}{name}", None))
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
