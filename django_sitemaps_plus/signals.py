"""Signals sent by django-sitemaps-plus.

Receivers run in the process that sent them, synchronously; they must be
quick and must not raise (a failing receiver would break the save or the
request that caused the send).
"""

from __future__ import annotations

from django.dispatch import Signal

#: Sent after cached sitemap files were made stale by ``cache.invalidate()``
#: (for model changes: once per transaction, after it commits, with every
#: section it changed; at once in autocommit mode; never for a transaction
#: that rolls back). Arguments:
#: ``sections``: the section names, or None for every section. A receiver may
#: purge a CDN or warm the cache again; it must not call ``invalidate()``.
sitemaps_invalidated = Signal()

#: Sent after a sitemap build wrote its files. Arguments: ``result``, the
#: ``build.BuildResult`` (written, skipped and removed names). A receiver may
#: purge a CDN for ``result.written`` or notify a search engine.
sitemaps_built = Signal()

#: Sent when an object's URL is queued for IndexNow. Arguments: ``urls``, a
#: list of absolute URLs. A receiver may trigger the submitting task (see
#: docs/indexnow.md for a Celery recipe); it must not submit synchronously.
indexnow_queued = Signal()
