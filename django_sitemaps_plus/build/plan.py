"""The plan of a build, made once: each file's section, page, URL count,
lastmod and key range as the index lists them (``FileJob``), kept in the
storage (``PLAN_DIR``) until the index is written.

``make_plan`` lays out every registered section's files, writes the interim
index (``files.write_interim_index``) and resumes the plan of a build that
failed or was killed. A generation file beside the plan names the plan
kept now (``current_generation``): a task of a superseded plan stops.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from django.core.files.storage import FileSystemStorage, Storage
from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus import names, protocol
from django_sitemaps_plus.build.files import (
    INDEX_NAME,
    file_loc,
    load_json,
    load_manifest,
    write_interim_index,
    write_json,
)
from django_sitemaps_plus.build.lock import (
    CACHE_LOCK_SECONDS,
    BuildRunning,
    remove_stale_temporaries,
)
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine import kept_figures, layout, measuring, pagination
from django_sitemaps_plus.engine.blocks import BlockFigures
from django_sitemaps_plus.engine.lastmod import format_w3c
from django_sitemaps_plus.registry import site as registry
from django_sitemaps_plus.sections import ModelSection
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.storage import read_bytes, storage_name, write_bytes
from django_sitemaps_plus.sites import SiteContext
from django_sitemaps_plus.stylesheet import XSL

logger = logging.getLogger("django_sitemaps_plus")

#: The folder of a build's plan and of its jobs' records (``BuildPlan``),
#: there until the build's index is written.
PLAN_DIR = ".sitemaps-build"
PLAN_FILE = "plan.json"
GENERATION_FILE = "generation"


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

    Kept in the storage (``plan_name``) until its index is written, with a
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


def plan_name(prefix: str) -> str:
    """Where the plan of the build folder ``prefix`` is kept."""
    return storage_name(f"{PLAN_DIR}/{PLAN_FILE}", prefix)


def load_plan(storage: Storage, prefix: str | None = None) -> BuildPlan | None:
    """The plan of a build that has not written its index yet, if any."""
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    data = load_json(storage, plan_name(prefix))
    try:
        return BuildPlan.from_json(data) if isinstance(data, dict) else None
    except (TypeError, KeyError):
        return None


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
    interim index (``files.write_interim_index``) and keep the plan in the
    storage. Resumes the plan of a build that failed or was killed: its
    finished jobs whose files are still the ones planned are not run again."""
    pending = load_plan(storage, prefix)
    running = workers_counting(pending) if pending is not None and pending.enqueued else False
    if pending is not None and running is None:
        # Unknown: the count lives in the cache. The new build takes the plan
        # over (a task of the old one then finds itself superseded and stops).
        logger.warning(
            "Sitemap cache unavailable: enqueued build %s taken over as not running",
            pending.generation,
        )
    elif pending is not None and running:
        raise BuildRunning(
            "An enqueued build of this storage is still running on task workers "
            f"(plan {pending.generation}; it counts as running until "
            f"{CACHE_LOCK_SECONDS} s after its last job finished)."
        )
    remove_stale_temporaries(storage, prefix)
    previous = load_manifest(storage, prefix)
    for section in registry:
        # Off the request path: blocks of sections sized by measure are
        # rendered and kept now, so the layout packs them by their bytes.
        measuring.measure_blocks(section, site)
    # The files an index lists: none that would have no URL.
    pages = [(section, page) for section in registry for page in section.listed_pages(site)]
    if len(pages) > protocol.MAX_SITEMAPS_PER_INDEX:
        # Before anything is rendered: the index lists one entry per file.
        raise ValueError(
            f"The index would list {len(pages):,} files; the protocol allows "
            f"{protocol.MAX_SITEMAPS_PER_INDEX:,}."
        )
    stylesheet = _stylesheet_href(storage, prefix)
    # A section whose block figures are kept reads them once (the layout just
    # brought them up to date): its files' fingerprints sum them, no row read.
    kept: dict[str, Mapping[int, BlockFigures] | None] = {}
    jobs = []
    for section, page in pages:
        name = section.get_name()
        loc = file_loc(section.own_site(site), name, page.number, "xml")
        job = FileJob(name, page.number, page.url_count, format_w3c(page.lastmod), loc)
        span = page.prepared
        if isinstance(span, pagination.Span):
            job.after, job.last, job.keyed = span.after, span.last, True
        # Without a fingerprint (not a model section keyed by blocks) a file
        # is rendered on every build.
        if job.keyed and isinstance(section, ModelSection) and section.files_keyed_by_blocks():
            if name not in kept:
                kept[name] = (
                    kept_figures.read(section, site, section.block_width()).figures
                    if kept_figures.keeps(section)
                    else None
                )
            job.fingerprint = layout.file_fingerprint(
                section, span, site, stylesheet, kept=kept[name]
            )
        if not force:
            job.previous = {f: previous[f] for f in job.files(text) if f in previous}
        jobs.append(job)
    planned = {names.file_name(job.section, job.page): job.lastmod for job in jobs}
    interim = write_interim_index(storage, prefix, gzip, site, previous, planned, stylesheet)
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
    write_json(storage, plan_name(prefix), plan.as_json())
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


def workers_counting(plan: BuildPlan) -> bool | None:
    """Whether the task workers of an enqueued plan still count it running
    (its jobs' count in the sitemap cache); None when the cache does not answer."""
    try:
        return quiet.call(quiet.get_cache(), "get", jobs_counter_key(plan)) is not None
    except quiet.CacheDown:
        return None


def discard_plan(storage: Storage, plan: BuildPlan) -> None:
    """Remove ``plan`` from the storage once its index is written: its
    jobs' records, the plan, its generation and their folder."""
    _discard_records(storage, plan)
    storage.delete(plan_name(plan.prefix))
    storage.delete(_generation_name(plan.prefix))
    _remove_folder(storage, storage_name(PLAN_DIR, plan.prefix))


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
