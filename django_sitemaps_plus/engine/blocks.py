"""The key-range SQL of a ``ModelSection``: what each block of keys holds.

A section's rows are cut into aligned primary key blocks (pagination.py);
``figures`` gives each block's row count, key sum and latest lastmod (of
every block, or of the changed ones and the new ones at the end: the kept
figures of ``kept_figures``) with ``UNION ALL``s of one range aggregate
per block, and ``range_figures`` the same for given key ranges (a file's,
when it is served). ``bounds`` and ``runs`` turn blocks into the key
filters a page is read with.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Count, Func, Max, Q, Sum, Value
from django.db.models.constants import LOOKUP_SEP
from django.db.models.sql.compiler import SQLCompiler

from django_sitemaps_plus.engine.lastmod import LastmodSpec, LastmodValue, file_lastmod, latest


class PkPage(Func):
    """The page of a row: ``(pk - 1) DIV width + 1``, integer division in SQL.
    Truncating division is the same on SQLite, PostgreSQL and MySQL (whose
    ``/`` is decimal, hence ``DIV``); keys at or below ``width`` are page 1.
    ``field``: the key column, when rows are paged by another table's key
    (django CMS's page contents by their page's).
    """

    output_field = models.IntegerField()

    def __init__(self, width: int, field: str = "pk") -> None:
        super().__init__(models.F(field))
        self.width = int(width)

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, Sequence[Any]]:
        operator = "DIV" if connection.vendor == "mysql" else "/"
        template = (
            f"(CASE WHEN %(expressions)s <= {self.width} THEN 1 "
            f"ELSE (%(expressions)s - 1) {operator} {self.width} + 1 END)"
        )
        return super().as_sql(compiler, connection, template=template, **extra_context)


class ByteLength(Func):
    """The length in bytes of a column's text (UTF-8): PostgreSQL's
    ``octet_length``, MySQL's ``LENGTH``, SQLite's ``length`` of it as a
    blob (its own ``length`` counts characters). A number is measured as
    its decimal text, which is what ``str()`` gives the URL."""

    output_field = models.IntegerField()

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, Sequence[Any]]:
        if connection.vendor == "postgresql":
            template = "octet_length((%(expressions)s)::text)"
        elif connection.vendor == "mysql":
            template = "LENGTH(%(expressions)s)"
        else:
            template = "length(CAST(%(expressions)s AS BLOB))"
        return super().as_sql(compiler, connection, template=template, **extra_context)


@dataclass(frozen=True)
class BlockFigures:
    """What one grouped query says of a block: its rows, their key sum, the
    latest lastmod, and whether any row has none (the block's fingerprint);
    and, when asked for (``byte_paths``), the longest value in bytes of each
    field its locations are spliced from (0: none has one), which bounds
    its files' bytes (``bounds.bounded_units``)."""

    count: int
    key_sum: int
    lastmod: LastmodValue = None
    undated: bool = False
    field_bytes: tuple[int, ...] = ()

    @property
    def file_lastmod(self) -> LastmodValue:
        """The lastmod of a file of these rows (``lastmod.file_lastmod``)."""
        return file_lastmod(self.lastmod, self.undated)


def combined(parts: Sequence[BlockFigures]) -> BlockFigures | None:
    """The figures of the rows of several blocks together (a file's, from its
    blocks' kept figures), or None when they hold no row: what one range
    aggregate over their keys gives, without the field bytes."""
    if not parts:
        return None
    return BlockFigures(
        sum(f.count for f in parts),
        sum(f.key_sum for f in parts),
        latest([f.lastmod for f in parts]),
        any(f.undated for f in parts),
    )


#: The bytes of a UUID's text in a URL (``str(uuid)``), whatever the column
#: holds (32 hex characters on SQLite and MySQL).
UUID_TEXT_BYTES = 36


def value_bytes_source(model: type[models.Model], path: str) -> str | int | None:
    """How the longest value of field ``path`` (``slug``, ``category__slug``)
    is known in bytes, as ``str()`` writes it into a URL: ``path`` itself
    when ``ByteLength`` measures it in SQL (a text or integer column), a
    number for a value of fixed length (a UUID), None when neither holds
    (another type, or a path across a many-valued relation)."""
    current: type[models.Model] = model
    field: Any = None
    for part in path.split(LOOKUP_SEP):
        if field is not None:
            if not isinstance(field, models.ForeignKey):  # OneToOneField is one too
                return None
            current = field.related_model
        try:
            field = current._meta.get_field(part)
        except Exception:
            return None
    if isinstance(field, models.ForeignKey):
        field = field.target_field  # the value is its key
    if isinstance(field, models.UUIDField):
        return UUID_TEXT_BYTES
    if isinstance(field, models.CharField | models.TextField | models.IntegerField):
        return path
    return None


def runs(
    missing: Sequence[int], ordered: Sequence[int], width: int
) -> Iterator[tuple[int | None, int]]:
    """Key ranges covering the ``missing`` blocks, each a run of them with no
    other block of ``ordered`` in between: (exclusive start or None, end)."""
    wanted = set(missing)
    first: int | None = None
    previous = 0
    for block in ordered:
        if block in wanted:
            if first is None:
                first = block
            previous = block
        elif first is not None:
            yield block_bounds(first, width)[0], previous * width
            first = None
    if first is not None:
        yield block_bounds(first, width)[0], previous * width


def block_bounds(block: int, width: int) -> tuple[int | None, int]:
    """Block ``block``'s keys, ``after < key <= last``; block 1 also holds
    the keys at or below 0 (``after`` None)."""
    return (None if block == 1 else (block - 1) * width), block * width


def bounds(after: int | None, last: int, field: str = "pk") -> dict[str, int]:
    """Filters for the keys ``after < field <= last`` (``field``: the key
    column, when rows are laid out by another table's key)."""
    if after is None:
        return {f"{field}__lte": last}
    return {f"{field}__gt": after, f"{field}__lte": last}


def last_block(queryset: models.QuerySet[Any], width: int, field: str = "pk") -> int:
    """The block of ``queryset``'s largest key (0: no rows), one index
    lookup (``field``: the key column, when rows are laid out by another
    table's key)."""
    top = queryset.order_by().aggregate(_top=Max(field))["_top"]
    return 0 if top is None else block_of(top, width)


def figures(
    queryset: models.QuerySet[Any],
    spec: LastmodSpec,
    width: int,
    batch: int,
    last: int,
    only: Collection[int] | None = None,
    past: int = 0,
    byte_paths: Sequence[str] = (),
) -> dict[int, BlockFigures]:
    """Rows, key sum and lastmod per block of ``queryset`` up to block
    ``last`` (``last_block``), with the longest value in bytes of each of
    ``byte_paths``, keyed by block: of every block (``only``
    None), else of the blocks ``only`` and of every block past block
    ``past`` (what kept figures lack: the blocks a save changed, and blocks
    new rows opened at the end).

    Each lastmod group (see ``LastmodSpec.page_aggregates``) is read with a ``UNION
    ALL`` of one aggregate per block's key range, ``batch`` blocks to a
    query: each member an index range scan of one block, with nothing to
    sort. One ``GROUP BY`` on the block number instead sorts the whole
    section, on disk on PostgreSQL past about 4,000,000 rows (333 MB of
    temporary files per read at 10,000,000: docs/benchmarks.md). A read of
    every block costs ``ceil(blocks / batch)`` queries per lastmod group, a
    read of a few changed blocks one.
    """
    chosen = list(range(1 if only is None else past + 1, last + 1))
    if only is not None:
        chosen[:0] = sorted(b for b in only if 1 <= b <= min(past, last))
    batch = max(1, batch)
    found: dict[int, BlockFigures] = {}
    for first in range(0, len(chosen), batch):
        ranges = [(b, *block_bounds(b, width)) for b in chosen[first : first + batch]]
        found.update(range_figures(queryset, spec, ranges, byte_paths=byte_paths))
    return found


def block_of(key: int, width: int) -> int:
    """The block of ``key`` (keys at or below ``width`` are block 1)."""
    return 1 if key <= width else (key - 1) // width + 1


def blocks_filter(only: Collection[int], past: int, width: int, field: str = "pk") -> Q:
    """A filter for the rows of the blocks ``only`` and of every block past
    block ``past`` (``blocks.figures``' choice, for a section that reads
    its figures with a query of its own)."""
    if past == 0:
        return Q()
    condition = Q(**{f"{field}__gt": past * width})
    for after, last in runs(sorted(b for b in only if b <= past), range(1, past + 1), width):
        condition |= Q(**bounds(after, last, field))
    return condition


def _related_filters(
    model: type[models.Model], path: str, after: int | None, last: int
) -> dict[str, Any]:
    """Filters joining ``path``'s relation for the keys ``after < pk <=
    last``: only rows with a value (an inner join) and, across a reverse
    foreign key, the same key range on the foreign key column, so the
    database reads the related rows of the range from the foreign key's
    index."""
    filters: dict[str, Any] = {f"{path}__isnull": False}
    hop = path.split(LOOKUP_SEP, 1)[0]
    field = model._meta.get_field(hop)
    if isinstance(field, models.ManyToOneRel):
        key = f"{hop}{LOOKUP_SEP}{field.field.name}"
        filters.update({f"{key}__{k.split('__')[1]}": v for k, v in bounds(after, last).items()})
    return filters


def _range_union(
    queryset: models.QuerySet[Any],
    ranges: Sequence[tuple[int, int | None, int]],
    aggregates: dict[str, Any],
    related: str | None = None,
) -> list[dict[str, Any]]:
    """One row of ``aggregates`` per key range (label, after, last),
    labelled ``_sitemaps_page``: a UNION ALL of range aggregates.

    ``related``: a many-valued lastmod path whose join (one per member,
    all its conditions in one ``filter()``) the aggregates read.
    """
    members = [
        queryset.filter(
            **bounds(after, last),
            **(_related_filters(queryset.model, related, after, last) if related else {}),
        )
        .order_by()
        .annotate(_sitemaps_page=Value(label, output_field=models.IntegerField()))
        .values("_sitemaps_page")
        .annotate(**aggregates)
        for label, after, last in ranges
    ]
    if len(members) <= 1:
        return [row for member in members for row in member]
    return list(members[0].union(*members[1:], all=True))


def _first_aggregates(
    spec: LastmodSpec, key_sum: bool = True, byte_paths: Sequence[str] = ()
) -> tuple[dict[str, Any], list[str]]:
    """The aggregates of every block's first query: rows, key sum (for a
    block's fingerprint; a file's figures need none), rows without lastmod,
    the latest of each single-valued lastmod path, and the longest value in
    bytes of each of ``byte_paths`` (single-valued: the location's fields)."""
    groups = spec.page_aggregates()
    own = groups[0][1] if groups and groups[0][0] == "own" else []
    own_aggregates = {f"_m{i}": Max(p.source()) for i, p in enumerate(own)}
    aggregates = {
        "_n": Count("pk"),
        **({"_s": Sum("pk")} if key_sum else {}),
        # Rows without a lastmod, where a row can have none.
        **({"_u": Count("pk", filter=spec.undated())} if spec.can_be_missing else {}),
        **own_aggregates,
        **{f"_b{i}": Max(ByteLength(path)) for i, path in enumerate(byte_paths)},
    }
    return aggregates, list(own_aggregates)


def range_figures(
    queryset: models.QuerySet[Any],
    spec: LastmodSpec,
    ranges: Sequence[tuple[int, int | None, int]],
    key_sum: bool = True,
    byte_paths: Sequence[str] = (),
) -> dict[int, BlockFigures]:
    """Figures of each key range (label, after, last) that has rows
    (``key_sum`` False: without the key sum, 0; ``byte_paths``: see
    ``figures``)."""
    queryset = queryset.order_by()
    aggregates, own = _first_aggregates(spec, key_sum, byte_paths)
    figures: dict[int, BlockFigures] = {}
    lastmods: dict[int, list[LastmodValue]] = {}
    for row in _range_union(queryset, ranges, aggregates):
        if row["_n"]:
            field_bytes = tuple(int(row[f"_b{i}"] or 0) for i in range(len(byte_paths)))
            label = row["_sitemaps_page"]
            figures[label] = BlockFigures(
                row["_n"], int(row.get("_s") or 0), None, bool(row.get("_u")), field_bytes
            )
            lastmods[label] = [row[k] for k in own]
    filled = [r for r in ranges if r[0] in figures]
    for key, paths in spec.page_aggregates():
        if key == "own" or not filled:
            continue
        path = paths[0].path
        for row in _range_union(queryset, filled, {"_m": Max(path)}, related=path):
            lastmods.setdefault(row["_sitemaps_page"], []).append(row["_m"])
    return {
        block: replace(f, lastmod=latest(lastmods.get(block, [])))
        for block, f in sorted(figures.items())
    }
