"""IndexNow: tell Bing, Yandex and the other participating engines what changed.

Off until ``SITEMAPS_PLUS["INDEXNOW_KEY"]`` is set. Then (docs/indexnow.md): a
significant change of a registered object (``is_significant``) queues its URL
after the transaction commits (nothing is sent during a save, and no error is
raised into it); ``submit_pending()`` (``indexnow_submit``) drains the queue in
batches, retrying with backoff, and keeps what still fails for the next run;
``key_file`` serves ``/<key>.txt``.

The queue lives in the cache (``CACHE_ALIAS``): a counter reserved with
``incr`` and one key per URL, so any number of processes can append. A cache
that evicts may lose a notification; the sitemaps list every URL anyway.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.db import models, transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone

from django_sitemaps_plus import http, protocol
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine.location import absolute_location
from django_sitemaps_plus.registry import site
from django_sitemaps_plus.sections import ModelSection
from django_sitemaps_plus.serving import locks, quiet
from django_sitemaps_plus.signals import indexnow_queued
from django_sitemaps_plus.sites import site_context

logger = logging.getLogger("django_sitemaps_plus.indexnow")

PREFIX = "sitemaps_plus:indexnow"
#: Seconds a queued URL is kept if no run submits it.
QUEUE_TTL = 7 * 24 * 3600
#: Seconds the submit lock lives (a run that dies frees it then).
LOCK_TTL = 600
#: Seconds before now within which an own lastmod field counts as "just changed".
SIGNIFICANT_WINDOW = 120
#: Longest wait between two attempts, and after a failed run.
MAX_BACKOFF = 300
BEFORE_ATTR = "_sitemaps_plus_lastmod_before"


def _cache() -> quiet.Guarded:
    """The sitemap cache, each call through the breaker (``quiet``): a cache
    that is down raises ``quiet.CacheDown`` at once, not after a timeout."""
    return quiet.Guarded(quiet.get_cache())


# The queue -------------------------------------------------------------------


def enqueue(urls: Iterable[str]) -> int:
    """Append absolute URLs to the queue; returns how many were queued."""
    urls = list(dict.fromkeys(urls))
    if not urls:
        return 0
    cache = _cache()
    cache.add(f"{PREFIX}:tail", 0, timeout=None)
    try:
        end = int(cache.incr(f"{PREFIX}:tail", len(urls)))
    except ValueError:  # evicted between add and incr
        cache.set(f"{PREFIX}:tail", len(urls), timeout=None)
        end = len(urls)
    start = end - len(urls) + 1
    cache.set_many(
        {f"{PREFIX}:item:{n}": url for n, url in zip(range(start, end + 1), urls)},
        timeout=QUEUE_TTL,
    )
    indexnow_queued.send(sender=None, urls=urls)
    return len(urls)


def _bounds(cache: quiet.Guarded) -> tuple[int, int]:
    values = cache.get_many([f"{PREFIX}:head", f"{PREFIX}:tail"])
    return int(values.get(f"{PREFIX}:head", 0)), int(values.get(f"{PREFIX}:tail", 0))


def _queued(cache: quiet.Guarded) -> int:
    """How many URLs are queued (the queue's length, without reading its items)."""
    head, tail = _bounds(cache)
    return max(0, tail - head)


def pending(limit: int | None = None) -> list[str]:
    """The queued URLs, oldest first (the first ``limit`` of them)."""
    cache = _cache()
    head, tail = _bounds(cache)
    if limit is not None:
        tail = min(tail, head + limit)
    return _items(cache, head, tail)[1]


def _items(cache: quiet.Guarded, head: int, last: int) -> tuple[list[str], list[str]]:
    """The keys of the queue's items after ``head`` up to ``last``, and the
    URLs the cache still holds of them."""
    keys = [f"{PREFIX}:item:{n}" for n in range(head + 1, last + 1)]
    found = cache.get_many(keys)
    return keys, [str(found[k]) for k in keys if k in found]


@dataclass
class QueueStatus:
    """What the admin overview shows of the queue."""

    queued: int
    oldest: list[str]
    #: When the next run may submit after a failed one (seconds since the epoch).
    retry_at: float | None
    #: Whether a run holds the submission lock now.
    submitting: bool


def queue_status(show: int = 20) -> QueueStatus:
    """The queue's length, its oldest URLs, the backoff and the lock: a few
    cache round trips, never the whole queue."""
    cache = _cache()
    retry_at = cache.get(f"{PREFIX}:retry_at")
    return QueueStatus(
        queued=_queued(cache),
        oldest=pending(limit=show),
        retry_at=float(retry_at) if isinstance(retry_at, (int, float)) else None,
        submitting=cache.get(f"{PREFIX}:lock") is not None,
    )


# What to queue ---------------------------------------------------------------


def is_significant(
    section: ModelSection, instance: models.Model, *, created: bool, deleted: bool, **kwargs: Any
) -> bool:
    """Whether a save or delete changed what the object's page shows.
    A section may define ``indexnow_significant(instance, created=, deleted=,
    update_fields=)`` to decide itself. Otherwise: creations and deletions
    are; a save with ``update_fields`` naming none of the section's own
    ``lastmod_fields`` or URL fields is not; a save of a section with own
    lastmod fields is when this save changed one of them (a
    ``ContentChangedField`` or ``auto_now`` stamped it; compared with the
    values ``remember_lastmod`` noted before the save, or, without them, a
    value within the last ``SIGNIFICANT_WINDOW`` seconds); a section without
    any is significant on every save.
    """
    hook = getattr(section, "indexnow_significant", None)
    if callable(hook):
        return bool(hook(instance, created=created, deleted=deleted, **kwargs))
    if created or deleted:
        return True
    own = _own_lastmod_fields(section)
    update_fields = kwargs.get("update_fields")
    if update_fields is not None:
        relevant = set(own) | set(section.url_kwargs.values())
        if not relevant & set(update_fields):
            return False
    if not own:
        return True
    before = instance.__dict__.get(BEFORE_ATTR)
    if isinstance(before, dict):
        # Recorded by the pre_save receiver: did this save stamp a field?
        return any(before.get(name) != getattr(instance, name, None) for name in own)
    threshold = timezone.now() - dt.timedelta(seconds=SIGNIFICANT_WINDOW)
    for name in own:
        value = getattr(instance, name, None)
        if isinstance(value, dt.datetime):
            if timezone.is_naive(value):
                value = timezone.make_aware(value)
            if value >= threshold:
                return True
        elif isinstance(value, dt.date) and value >= threshold.date():
            return True
    return False


def _own_lastmod_fields(section: ModelSection) -> list[str]:
    return [p.path for p in section.lastmod_spec.paths if "__" not in p.path]


def _sections_of(model: type[models.Model]) -> list[ModelSection]:
    """The registered model sections listing ``model``'s rows."""
    concrete = model._meta.concrete_model or model
    return [
        section
        for section in site
        if isinstance(section, ModelSection)
        and (section.get_model()._meta.concrete_model or section.get_model()) is concrete
    ]


def remember_lastmod(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    """pre_save: note the own lastmod values before ``save()`` stamps any."""
    names = {name for section in _sections_of(sender) for name in _own_lastmod_fields(section)}
    if names:
        instance.__dict__[BEFORE_ATTR] = {name: getattr(instance, name, None) for name in names}


def object_url(section: ModelSection, instance: models.Model) -> str | None:
    """The absolute URL the section lists for ``instance`` (None if it has none)."""
    template = section.location_template()
    if template is not None:
        values = [getattr(instance, section.url_kwargs[name]) for name in template.kwarg_names]
        location = template.path(values)
    else:
        location = section.location(instance)
    url, _ = absolute_location(location, site_context(None))
    return url


def object_changed(
    sender: type[models.Model],
    instance: models.Model,
    *,
    deleted: bool,
    using: str | None = None,
    **kwargs: Any,
) -> None:
    """Queue ``instance``'s URL after commit, when the change is significant."""
    created = bool(kwargs.pop("created", False))
    kwargs.pop("signal", None)
    for section in _sections_of(sender):
        if not is_significant(section, instance, created=created, deleted=deleted, **kwargs):
            continue
        url = object_url(section, instance)
        if url is None:
            continue
        pk = instance.pk

        def queue(section: ModelSection = section, url: str = url, pk: Any = pk) -> None:
            try:
                # Only URLs the sitemap lists (a draft's save is not news).
                if deleted or section.site_queryset(None).filter(pk=pk).exists():
                    enqueue([url])
            except quiet.CacheDown:
                # The breaker logged the cache's failure; no traceback per save.
                logger.warning("IndexNow: %s not queued: the sitemap cache is down", url)
            except Exception:
                logger.exception("IndexNow: could not queue %s", url)

        transaction.on_commit(queue, using=using)


# Submitting ------------------------------------------------------------------


@dataclass
class SubmitResult:
    """What one run of ``submit_pending`` did."""

    submitted: int = 0
    dropped: int = 0
    remaining: int = 0
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    skipped_until: float | None = None
    #: Another run held the lock: this one submitted nothing, ``remaining`` is
    #: what that run has still to send.
    busy: bool = False

    @property
    def ok(self) -> bool:
        return not self.remaining and not self.errors


class SubmitError(Exception):
    def __init__(self, message: str, *, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


def key_location(base_url: str, key: str) -> str:
    """The absolute URL of the key file: where the app's URLs serve it, else the root."""
    from django.urls import NoReverseMatch, reverse

    try:
        path = reverse("sitemaps_plus:indexnow_key", kwargs={"key": key})
    except NoReverseMatch:
        path = f"/{key}.txt"
    return f"{base_url.rstrip('/')}{path}"


def post(urls: Sequence[str], *, key: str, endpoint: str, timeout: float) -> int:
    """POST one batch (all on one host); returns the HTTP status or raises SubmitError."""
    parts = urlsplit(urls[0])
    body = json.dumps(
        {
            "host": parts.netloc,
            "key": key,
            "keyLocation": key_location(f"{parts.scheme}://{parts.netloc}", key),
            "urlList": list(urls),
        }
    ).encode()
    try:
        answer = http.request(
            endpoint,
            method="POST",
            data=body,
            headers={"Content-Type": "application/json; charset=utf-8"},
            timeout=timeout,
        )
    except http.Unreachable as exc:
        raise SubmitError(str(exc), retry=True) from exc
    answer.close()
    if 200 <= answer.status < 300:
        return answer.status
    # 400 bad request, 403 key not valid, 422 URLs not on the host: no retry
    # helps. 429 too many requests and 5xx: retry later (http.retryable).
    raise SubmitError(f"HTTP {answer.status} from {endpoint}", retry=http.retryable(answer.status))


def submit_pending(
    *,
    max_attempts: int | None = None,
    force: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> SubmitResult:
    """Submit every queued URL; safe to run from several processes at once."""
    result = SubmitResult()
    key = conf.INDEXNOW_KEY
    if not key:
        result.errors.append("SITEMAPS_PLUS['INDEXNOW_KEY'] is not set.")
        return result
    cache = _cache()
    retry_at = cache.get(f"{PREFIX}:retry_at")
    if not force and isinstance(retry_at, (int, float)) and retry_at > time.time():
        result.skipped_until = float(retry_at)
        result.remaining = _queued(cache)
        return result
    lock = locks.Lock(cache.cache, f"{PREFIX}:lock", LOCK_TTL)
    if not lock.take():
        logger.info("IndexNow: another run is submitting.")
        result.busy = True
        result.remaining = _queued(cache)
        return result
    attempts = max_attempts or conf.INDEXNOW_MAX_ATTEMPTS
    batch_size = min(conf.INDEXNOW_BATCH_SIZE, protocol.INDEXNOW_MAX_URLS_PER_POST)
    try:
        head, tail = _bounds(cache)
        while head < tail:
            last = min(tail, head + batch_size)
            keys, urls = _items(cache, head, last)
            by_host: dict[str, list[str]] = {}
            for url in dict.fromkeys(urls):
                by_host.setdefault(urlsplit(url).netloc, []).append(url)
            for batch in by_host.values():
                outcome = _post_with_backoff(batch, key, attempts, sleep, result)
                if outcome == "retry":
                    backoff = min(MAX_BACKOFF, 2**attempts)
                    cache.set(f"{PREFIX}:retry_at", time.time() + backoff, timeout=None)
                    result.remaining = tail - head
                    return result
                if outcome == "dropped":
                    result.dropped += len(batch)
                else:
                    result.submitted += len(batch)
            cache.set(f"{PREFIX}:head", last, timeout=None)
            cache.delete_many(keys)
            head = last
            tail = _bounds(cache)[1]
        cache.delete(f"{PREFIX}:retry_at")
    finally:
        lock.release()
    return result


def _post_with_backoff(
    batch: list[str],
    key: str,
    attempts: int,
    sleep: Callable[[float], None],
    result: SubmitResult,
) -> str:
    """ "submitted", "dropped" (rejected for good) or "retry" (still failing)."""
    for attempt in range(1, attempts + 1):
        result.requests += 1
        try:
            status = post(
                batch,
                key=key,
                endpoint=conf.INDEXNOW_ENDPOINT,
                timeout=conf.INDEXNOW_TIMEOUT,
            )
        except SubmitError as exc:
            if not exc.retry:
                message = f"IndexNow rejected {len(batch)} URL(s) ({batch[0]} ...): {exc}"
                logger.error(message)
                result.errors.append(message)
                return "dropped"
            logger.warning(
                "IndexNow attempt %s/%s failed: %s", attempt, attempts, exc, exc_info=False
            )
            if attempt == attempts:
                result.errors.append(f"IndexNow still failing after {attempts} attempts: {exc}")
                return "retry"
            sleep(min(MAX_BACKOFF, 2 ** (attempt - 1)))
            continue
        logger.info("IndexNow: submitted %s URL(s), HTTP %s", len(batch), status)
        return "submitted"
    return "retry"  # pragma: no cover - attempts >= 1


# The key file ------------------------------------------------------------------


def key_file(request: HttpRequest, key: str) -> HttpResponse:
    """``/<key>.txt``: the key, proving the site owns it (IndexNow)."""
    if not conf.INDEXNOW_KEY or key != conf.INDEXNOW_KEY:
        raise Http404("No such file.")
    return HttpResponse(key, content_type="text/plain; charset=utf-8")
