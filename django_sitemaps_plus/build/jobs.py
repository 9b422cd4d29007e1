"""A plan's file jobs (``run_job``: one file rendered, replaced atomically, and
its record written) and its index step (``finish``: only when every job has
its record, else ``BuildFailed``); see the ``build`` package and
docs/architecture.md ("A build").

Records live in the storage, not the cache: every machine that builds must
reach the storage anyway, and a storage does not evict. What a finished
build did is kept in the sitemap cache for the admin (``last_build_key``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from django.core.files.storage import Storage

from django_sitemaps_plus.build.files import (
    INDEX_NAME,
    BuildResult,
    Writer,
    built_files,
    load_json,
    write_json,
    write_manifest,
)
from django_sitemaps_plus.build.lock import storage_identity
from django_sitemaps_plus.build.plan import BuildPlan, FileJob, discard_plan
from django_sitemaps_plus.engine import pagination, xml
from django_sitemaps_plus.registry import site as registry
from django_sitemaps_plus.sections import PageInfo
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.storage import storage_name
from django_sitemaps_plus.signals import sitemaps_built
from django_sitemaps_plus.sites import SiteContext

#: Seconds the sitemap cache keeps what the last build did (``last_build_key``).
LAST_BUILD_SECONDS = 90 * 24 * 3600


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


def _job_record(storage: Storage, plan: BuildPlan, job: FileJob) -> dict[str, Any] | None:
    record = load_json(storage, plan.record_name(job))
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
    writer = Writer(storage, plan.prefix, plan.gzip, job.previous, result, renew)
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
    write_json(storage, plan.record_name(job), record)
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
    writer = Writer(storage, plan.prefix, plan.gzip, old, result, renew)
    writer.new = new
    if entries:
        # The index last: every file it names is complete by now.
        writer.write(INDEX_NAME, xml.stream_index(entries, plan.stylesheet), files=len(entries))
    write_manifest(storage, plan.prefix, site.base_url, writer.new)
    # Removed last: the index on the storage no longer names these files.
    unlisted = set(plan.previous_files)
    if plan.force:
        unlisted |= built_files(storage, plan.prefix)
    for name in sorted(unlisted - set(writer.new)):
        path = storage_name(name, plan.prefix)
        for stale in (path, path + ".gz"):
            if storage.exists(stale):
                storage.delete(stale)
        result.removed.append(name)
    discard_plan(storage, plan)
    result.seconds = time.monotonic() - started
    sitemaps_built.send(sender=None, result=result)
    _remember_build(storage, plan, result)
    return result


def last_build_key(storage: Storage, prefix: str) -> str:
    """The sitemap cache's summary of the last build of ``storage``/``prefix``
    (what ``sitemaps_built`` was sent, counted; the admin overview shows it)."""
    return f"sitemaps_plus:last-build:{storage_identity(storage, prefix)}"


def _remember_build(storage: Storage, plan: BuildPlan, result: BuildResult) -> None:
    """Keep the counts of ``result`` in the sitemap cache; a cache that is
    down loses them, never the build (the manifest has the files)."""
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
    key = last_build_key(storage, plan.prefix)
    quiet.quietly(None, quiet.available(), "set", key, summary, timeout=LAST_BUILD_SECONDS)
