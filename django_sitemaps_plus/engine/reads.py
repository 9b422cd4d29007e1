"""Reading a page's rows: in batches, streamed from the database.

``model_rows`` reads a ``ModelSection``'s rows as the render loop takes them
(on the ``url_name`` fast path only the key, the URL kwargs' columns and the
lastmod text; otherwise model instances); ``fetch_chunks`` reads a
``values_list`` queryset's compiled SQL with ``fetchmany``; ``streaming_reads``
wraps a page's reads so PostgreSQL's server-side cursor streams
(docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import TYPE_CHECKING, Any

from django.core.exceptions import EmptyResultSet
from django.db import connections, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.sql.compiler import SQLCompiler
from django.urls import NoReverseMatch

from django_sitemaps_plus.engine.lastmod import format_w3c

if TYPE_CHECKING:
    from django_sitemaps_plus.engine.location import LocationTemplate
    from django_sitemaps_plus.engine.render import Row
    from django_sitemaps_plus.sections import ModelSection
    from django_sitemaps_plus.sites import SiteContext

#: Rows fetched per database round trip, and per extension ``fetch``.
BATCH_ROWS = 2_000
#: Rows of a page's first batch: a streamed file's first byte waits for them only.
FIRST_BATCH_ROWS = 100


def fetch_chunks(queryset: models.QuerySet[Any]) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of a ``values_list`` queryset, ``BATCH_ROWS`` per list
    (``FIRST_BATCH_ROWS`` in the first, so the first byte leaves early).

    The compiled SQL is read with ``fetchmany``: no per-row iterator
    machinery, and each chunk's rows go through the backend's converters only
    when a column has any (a W3C text lastmod, a slug or an integer has none).
    The cursor is the connection's ``chunked_cursor()``, as ``iterator()``
    uses: on PostgreSQL a server-side cursor (unless
    ``DISABLE_SERVER_SIDE_CURSORS``), so the page's rows are never all in
    the client's memory at once. A client-side cursor was as fast in the
    benchmark (docs/benchmarks.md) but holds the whole result in libpq:
    6.6 MB of peak RSS for a 50,000-URL page against 2.2 MB.
    """
    compiler = queryset.query.get_compiler(queryset.db)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        return
    converters = compiler.get_converters([col for col, _, _ in compiler.select])
    with streaming_reads(queryset.db):
        yield from _fetched(connections[queryset.db], compiler, sql, params, converters)


@contextmanager
def streaming_reads(using: str) -> Iterator[None]:
    """Around reading a page's rows from a server-side cursor, so they stream.
    Outside a transaction Django declares PostgreSQL's server-side cursors
    WITH HOLD, which PostgreSQL materialises whole at the DECLARE (the
    implicit commit): the first row waits for the last. In a transaction the
    cursor is WITHOUT HOLD and rows are produced as they are fetched, so a
    streamed file's first byte leaves early. The reads are read-only; the
    transaction ends with the generator that holds it (the response's close).
    Other databases stream (SQLite) or buffer (MySQL) the same either way.
    """
    connection = connections[using]
    if connection.vendor == "postgresql" and connection.get_autocommit():
        with transaction.atomic(using=using):
            yield
    else:
        yield


def _fetched(
    connection: BaseDatabaseWrapper,
    compiler: SQLCompiler,
    sql: str,
    params: Any,
    converters: Any,
) -> Iterator[list[tuple[Any, ...]]]:
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        size = FIRST_BATCH_ROWS
        while True:
            rows = cursor.fetchmany(size)
            size = BATCH_ROWS
            if not rows:
                return
            if converters:
                rows = [tuple(row) for row in compiler.apply_converters(rows, converters)]
            yield rows


def model_rows(
    section: ModelSection, queryset: models.QuerySet[Any], site: SiteContext
) -> Iterator[list[Row]]:
    """``queryset``'s rows as (item, absolute URL or None, lastmod text,
    kwarg values or None), in batches.

    The item is the primary key on the fast path (``url_name``), where no
    model instance is built, and the instance otherwise.
    """
    spec = section.lastmod_spec
    in_sql = spec.formats_in_sql(connections[queryset.db].vendor)
    lastmod_column = (spec.text_expression() if in_sql else spec.row_expression()) if spec else None

    def texts(values: list[Any]) -> list[str | None]:
        """The lastmod text of each row (formatted in SQL, or here; none without a spec)."""
        return values if in_sql or not spec else list(map(format_w3c, values))

    template = section.location_template()
    if template is not None:
        fields = [section.url_kwargs[name] for name in template.kwarg_names]
        columns: list[Any] = ["pk", *fields]
        if lastmod_column is not None:
            columns.append(lastmod_column)
        width = len(fields)
        # The kwarg values travel with each row only for the extensions
        # (hreflang re-locates the item per language); slicing costs.
        keep_values = bool(section.extensions)
        for chunk in fetch_chunks(queryset.values_list(*columns)):
            lastmods = texts([row[-1] for row in chunk] if spec else [None] * len(chunk))
            urls: Sequence[str | None] | None = template.paths(chunk, 1, site.base_url)
            if urls is None:
                urls = [_template_url(section, template, row[1 : 1 + width], row[0], site)
                        for row in chunk]  # fmt: skip
            yield [
                (row[0], url, lastmod, row[1 : 1 + width] if keep_values else None)
                for row, url, lastmod in zip(chunk, urls, lastmods)
            ]
    else:
        if lastmod_column is not None:
            queryset = queryset.annotate(_sitemaps_lastmod=lastmod_column)
        # hreflang locates each language version itself; the item's own
        # location (in the active language) may not even exist.
        own_location = not section.has_versions()
        with streaming_reads(queryset.db):
            objects = queryset.iterator(chunk_size=BATCH_ROWS)
            size = FIRST_BATCH_ROWS
            while instances := list(islice(objects, size)):
                size = BATCH_ROWS
                none: list[Any] = [None] * len(instances)
                lastmods = texts([o._sitemaps_lastmod for o in instances] if spec else none)
                urls = section.location_urls(instances, site) if own_location else none
                yield list(zip(instances, urls, lastmods, none))


def _template_url(
    section: ModelSection,
    template: LocationTemplate,
    values: Sequence[Any],
    key: Any,
    site: SiteContext,
) -> str | None:
    try:
        return site.absolute(template.path(values))
    except NoReverseMatch:
        section.drop_item(key, f"does not reverse {section.url_name!r} with {tuple(values)!r}")
        return None
