"""One build at a time: the build lock of a storage, and what a killed holder left.

A build holds the lock for its whole run (``build_lock``): an exclusive
``flock`` on a lock file in a ``FileSystemStorage``, else a ``locks.Lock`` in
the sitemap cache, renewed as files are written; a second build raises
``BuildRunning`` instead of interleaving its files with the first's. The
holder removes the temporary files a killed build left
(``remove_stale_temporaries``).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.core.files.storage import FileSystemStorage, Storage

from django_sitemaps_plus.serving import locks, quiet
from django_sitemaps_plus.serving.storage import storage_name

logger = logging.getLogger("django_sitemaps_plus")

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

    key = f"sitemaps_plus:build:{storage_identity(storage, prefix)}"
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


def storage_identity(storage: Storage, prefix: str) -> str:
    """What the sitemap cache names the build folder ``prefix`` of ``storage``
    after (its build lock, its last build): two buckets never share a name,
    the same bucket always does, whichever machine builds."""
    parts = [storage.__class__.__name__]
    parts += [str(value) for a in _STORAGE_IDENTITY if (value := getattr(storage, a, None))]
    parts.append(storage_name("", prefix))
    return ":".join(parts)


def remove_stale_temporaries(storage: Storage, prefix: str) -> list[str]:
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
