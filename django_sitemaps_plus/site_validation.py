"""Validating the site's own sitemaps from the admin, in the background.

The admin overview's button calls ``start()``: it records a run in the cache
(``CACHE_ALIAS``) and hands its id to the runner, a thread of the web process
by default or ``SITEMAPS_PLUS["VALIDATION_RUNNER"]`` (a Celery task's
``delay``, say). ``run()`` validates as ``manage.py validate_sitemaps`` does
(``validate_site``: the real views, in-process) and writes its progress (files
done of files listed) and, at the end, its summary and findings back to the
cache, where any process serving the admin reads them (``get()``). The request
that starts a run returns at once: a run over a large site never times out a
request.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import close_old_connections
from django.utils.module_loading import import_string

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving import quiet

logger = logging.getLogger("django_sitemaps_plus")

KEY_PREFIX = "sitemaps_plus:validation"
#: Seconds a run's record is kept.
RUN_TTL = 7 * 24 * 3600
#: Findings kept per run for the admin (all are counted in the summary).
MAX_SHOWN_FINDINGS = 500
#: Seconds between progress writes (each is one cache write).
PROGRESS_INTERVAL = 0.5
#: Seconds without a progress write after which a running run is shown as
#: stalled (its process stopped: a recycled worker, a deploy) and a new one
#: may start.
STALLED_AFTER = 600


@dataclass
class Run:
    """One validation run, as stored in the cache."""

    id: str
    state: str = "queued"  # queued, running, done, failed
    started: float = field(default_factory=time.time)
    finished: float | None = None
    #: URLs fetched so far, and the files the index listed when the run began
    #: (each XML file and its .txt twin, the index and sitemap.txt).
    done: int = 0
    total: int | None = None
    current: str = ""
    errors: int = 0
    warnings: int = 0
    infos: int = 0
    files: int = 0
    findings: list[dict[str, Any]] = field(default_factory=list)
    message: str = ""
    #: When the record was last written (progress included).
    updated: float = field(default_factory=time.time)

    @property
    def running(self) -> bool:
        return self.state in ("queued", "running") and not self.stalled

    @property
    def stalled(self) -> bool:
        """Queued or running, but silent for ``STALLED_AFTER`` seconds."""
        return self.state in ("queued", "running") and time.time() - self.updated > STALLED_AFTER

    @property
    def percent(self) -> int:
        if not self.total:
            return 0 if self.running else 100
        return min(100, round(100 * self.done / self.total))

    @property
    def passed(self) -> bool:
        return self.state == "done" and self.errors == 0


def _cache() -> Any:
    """The sitemap cache, each call through the breaker (``quiet``)."""
    return quiet.Guarded(quiet.get_cache())


def _save(run: Run) -> None:
    run.updated = time.time()
    cache = _cache()
    cache.set(f"{KEY_PREFIX}:{run.id}", asdict(run), timeout=RUN_TTL)


def get(run_id: str) -> Run | None:
    """The run ``run_id`` as last recorded, or None when unknown or expired."""
    value = _cache().get(f"{KEY_PREFIX}:{run_id}")
    if not isinstance(value, dict):
        return None
    try:
        return Run(**value)
    except TypeError:
        return None


def latest() -> Run | None:
    """The last run started, if its record is still kept."""
    run_id = _cache().get(f"{KEY_PREFIX}:latest")
    return get(run_id) if isinstance(run_id, str) else None


def start(total: int | None = None) -> Run:
    """Record a new run and hand it to the runner; returns at once.
    ``total``: the number of URLs the run will fetch, when the caller knows
    it (the overview does: every file of the index, its text twin, the index
    and ``sitemap.txt``); without it progress shows files done only. While
    the last run is still running (and not stalled) that run is returned
    instead: one validation at a time.
    """
    current = latest()
    if current is not None and current.running:
        return current
    run = Run(id=uuid.uuid4().hex[:16], total=total)
    _save(run)
    _cache().set(f"{KEY_PREFIX}:latest", run.id, timeout=RUN_TTL)
    runner = conf.VALIDATION_RUNNER
    if runner:
        import_string(runner)(run.id)
    else:
        thread = threading.Thread(
            target=run_in_thread, args=(run.id,), name=f"sitemaps-validation-{run.id}"
        )
        thread.daemon = True
        thread.start()
    return run


def run_in_thread(run_id: str) -> None:
    """``run()`` in a thread of its own: its own database connection, closed after."""
    try:
        run(run_id)
    finally:
        close_old_connections()
        from django.db import connections

        connections.close_all()


def run(run_id: str) -> Run | None:
    """Validate the site's sitemaps for the recorded run ``run_id``.
    Called by the runner (a thread, a Celery task, ...). Progress is written
    at most every ``PROGRESS_INTERVAL`` seconds; the final record holds the
    summary and the first ``MAX_SHOWN_FINDINGS`` findings. An exception is
    recorded as a failed run (and logged), never raised into the runner.
    """
    # Here, not at the top: the admin imports this module in every web
    # process, which need neither lxml nor the validator.
    from django_sitemaps_plus.validation import Severity, validate_site

    record = get(run_id) or Run(id=run_id)
    record.state = "running"
    _save(record)
    last_write = 0.0

    def progress(url: str) -> None:
        nonlocal last_write
        record.done += 1
        record.current = url
        now = time.monotonic()
        if now - last_write >= PROGRESS_INTERVAL:
            last_write = now
            _save(record)

    try:
        report = validate_site(progress=progress)
    except Exception as exc:
        logger.exception("Sitemap validation %s failed", run_id)
        record.state = "failed"
        record.message = f"{type(exc).__name__}: {exc}"
    else:
        record.state = "done"
        record.files = len(report.files)
        counts = report.counts()  # stored and omitted findings alike
        record.errors = counts[Severity.ERROR]
        record.warnings = counts[Severity.WARNING]
        record.infos = counts[Severity.INFO]
        record.findings = [
            {**finding.as_dict(), "file": file.target}
            for file in report.files
            for finding in file.findings
        ][:MAX_SHOWN_FINDINGS]
    record.finished = time.time()
    record.current = ""
    _save(record)
    return record
