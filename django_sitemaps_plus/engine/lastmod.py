"""``<lastmod>`` from the fields whose change is a real content change.

A section names its content-change fields (``lastmod_fields``): the model's
own date/datetime fields and related ones across foreign keys, reverse foreign
keys and many-to-many relations (``"comments__created_at"``). A URL's lastmod is
the latest non-null value among them, computed in the page's SQL; a file's
lastmod in the index is the latest among the URLs of that file. Never the time
the file was generated.

A field may have fallbacks (``lastmod_fallbacks``): own fields whose value
stands in, the first that has one, for a row where the field is empty
(``COALESCE``): Wagtail's ``last_published_at``, empty on pages published
before Wagtail had it, falls back to ``latest_revision_created_at``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Exists, Expression, F, Func, Max, OuterRef, Q, Subquery, Value
from django.db.models.constants import LOOKUP_SEP
from django.db.models.functions import Cast, Coalesce, NullIf
from django.db.models.sql.compiler import SQLCompiler
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

#: A lastmod as sections give it: a date, a datetime, or none.
LastmodValue = dt.date | dt.datetime | None


class LastmodFieldError(ValueError):
    """A ``lastmod_fields`` entry that does not name a date or datetime field."""


@dataclass(frozen=True)
class LastmodPath:
    """One entry of ``lastmod_fields``, resolved against a model."""

    path: str
    field: models.DateField[Any, Any]
    #: Crosses a reverse foreign key or a many-to-many relation, so one object
    #: has many values: aggregated with ``Max`` rather than read as a column.
    many_valued: bool
    #: Whether an object can have no value here (a nullable field, a nullable
    #: or reverse relation on the way, or no related row at all).
    nullable: bool = True
    #: Own fields that stand in, the first with a value, where this one is
    #: empty (``lastmod_fallbacks``).
    fallbacks: tuple[str, ...] = ()

    @property
    def is_datetime(self) -> bool:
        return isinstance(self.field, models.DateTimeField)

    def source(self) -> Any:
        """The value of one row (or of the related rows, to aggregate): the
        field, or the first of it and its fallbacks that has a value."""
        if not self.fallbacks:
            return F(self.path)
        return Coalesce(
            F(self.path), *(F(name) for name in self.fallbacks), output_field=self.field
        )

    def empty(self) -> Q:
        """Rows with no value here: the field and its fallbacks all empty."""
        condition = Q(**{f"{self.path}__isnull": True})
        for name in self.fallbacks:
            condition &= Q(**{f"{name}__isnull": True})
        return condition


def with_fallbacks(
    model: type[models.Model], path: LastmodPath, fallbacks: Sequence[str]
) -> LastmodPath:
    """``path`` with ``fallbacks``: own fields of ``model``, the same kind
    (date or datetime) as ``path``'s; ``path`` itself is an own field."""
    if not fallbacks:
        return path
    if LOOKUP_SEP in path.path:
        raise LastmodFieldError(
            f"lastmod field {path.path!r} of {model._meta.label}: only an own field has fallbacks"
        )
    nullable = path.nullable
    for name in fallbacks:
        fallback = resolve_lastmod_path(model, name)
        if LOOKUP_SEP in name or fallback.is_datetime != path.is_datetime:
            raise LastmodFieldError(
                f"lastmod fallback {name!r} of {path.path!r} ({model._meta.label}) is not an "
                f"own {'datetime' if path.is_datetime else 'date'} field"
            )
        nullable = nullable and fallback.nullable
    return replace(path, fallbacks=tuple(fallbacks), nullable=nullable)


def resolve_lastmod_path(model: type[models.Model], path: str) -> LastmodPath:
    """Resolve ``path`` (``"comments__created_at"``) on ``model``.
    Raises ``LastmodFieldError`` naming the part that is wrong.
    """
    parts = path.split(LOOKUP_SEP)
    current: type[models.Model] = model
    many_valued = False
    nullable = False
    for index, part in enumerate(parts):
        try:
            field = current._meta.get_field(part)
        except FieldDoesNotExist:
            raise LastmodFieldError(
                f"{model._meta.label} has no field {LOOKUP_SEP.join(parts[: index + 1])!r} "
                f"(lastmod field {path!r})"
            ) from None
        last = index == len(parts) - 1
        if field.is_relation:
            if last:
                raise LastmodFieldError(
                    f"lastmod field {path!r} of {model._meta.label} names a relation, "
                    "not a date or datetime field"
                )
            if field.one_to_many or field.many_to_many:
                many_valued = True
            # A reverse one-to-one may have no row; a forward key may be null.
            if field.auto_created or getattr(field, "null", False):
                nullable = True
            related = field.related_model
            assert related is not None and not isinstance(related, str)
            current = related
            continue
        if not last:
            raise LastmodFieldError(
                f"lastmod field {path!r} of {model._meta.label}: {part!r} is not a relation"
            )
        if not isinstance(field, models.DateField):
            raise LastmodFieldError(
                f"lastmod field {path!r} of {model._meta.label} is a "
                f"{type(field).__name__}, not a DateField or DateTimeField"
            )
        return LastmodPath(
            path=path,
            field=field,
            many_valued=many_valued,
            nullable=nullable or many_valued or field.null,
        )
    raise LastmodFieldError(f"empty lastmod field of {model._meta.label}")  # pragma: no cover


class GreatestIgnoringNulls(Func):
    """``GREATEST`` of its arguments, ignoring nulls; null only when all are.
    PostgreSQL's GREATEST already ignores nulls; SQLite's MAX(a, b) and
    MySQL's GREATEST return null when any argument is null, so each argument
    is coalesced to a sentinel that is turned back into null afterwards. Each
    argument appears once in the SQL, so a subquery is evaluated once per row.
    """

    function = "GREATEST"

    def __init__(self, *expressions: Any, output_field: models.Field[Any, Any]) -> None:
        super().__init__(*expressions, output_field=output_field)

    def _with_sentinel(self) -> Expression:
        if isinstance(self.output_field, models.DateTimeField):
            floor: Any = dt.datetime(
                1000, 1, 1, tzinfo=dt.timezone.utc if settings.USE_TZ else None
            )
        else:
            floor = dt.date(1000, 1, 1)
        # Cast, so MySQL compares datetimes rather than strings.
        sentinel = Cast(Value(floor, output_field=self.output_field), self.output_field)
        wrapped = [Coalesce(expr, sentinel) for expr in self.get_source_expressions()]
        return NullIf(_Greatest(*wrapped, output_field=self.output_field), sentinel)

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, Sequence[Any]]:
        if connection.vendor == "postgresql":
            return super().as_sql(compiler, connection, **extra_context)
        sql, params = self._with_sentinel().as_sql(compiler, connection)
        return sql, params


class _Greatest(Func):
    function = "GREATEST"

    def as_sqlite(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, Sequence[Any]]:
        return super().as_sql(compiler, connection, function="MAX", **extra_context)


#: ``W3CDatetime``'s SQL per vendor: (date, UTC datetime). ``%%%%``: one ``%``
#: once the template and then the driver have formatted it.
_W3C_TEMPLATES = {
    "sqlite": (
        "strftime('%%%%Y-%%%%m-%%%%d', %(expressions)s)",
        "strftime('%%%%Y-%%%%m-%%%%dT%%%%H:%%%%M:%%%%SZ', %(expressions)s)",
    ),
    "postgresql": (
        "to_char(%(expressions)s, 'YYYY-MM-DD')",
        "to_char((%(expressions)s) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
    ),
    "mysql": (
        "DATE_FORMAT(%(expressions)s, '%%%%Y-%%%%m-%%%%d')",
        "DATE_FORMAT(%(expressions)s, '%%%%Y-%%%%m-%%%%dT%%%%H:%%%%i:%%%%sZ')",
    ),
}
#: Vendors for which ``W3CDatetime`` formats the value in SQL.
SQL_FORMAT_VENDORS = frozenset(_W3C_TEMPLATES)


class W3CDatetime(Func):
    """Format a date or UTC datetime as W3C Datetime text in SQL.
    Formatting in the database saves building a Python datetime per row, which
    dominates the cost of a 50,000-URL page. Used only when ``USE_TZ`` is on
    (stored values are UTC) and the vendor is in ``SQL_FORMAT_VENDORS``.
    """

    output_field = models.CharField()

    def __init__(self, expression: Any, *, date_only: bool) -> None:
        super().__init__(expression)
        self.date_only = date_only

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, Sequence[Any]]:
        date, datetime = _W3C_TEMPLATES[connection.vendor]
        template = date if self.date_only else datetime
        return super().as_sql(compiler, connection, template=template, **extra_context)


class LastmodSpec:
    """The resolved ``lastmod_fields`` of one model section."""

    def __init__(
        self,
        model: type[models.Model],
        fields: Sequence[str],
        fallbacks: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.model = model
        fallbacks = fallbacks or {}
        unknown = sorted(set(fallbacks) - set(fields))
        if unknown:
            raise LastmodFieldError(
                f"lastmod_fallbacks of {model._meta.label} name {', '.join(map(repr, unknown))}, "
                "not in lastmod_fields"
            )
        self.paths = [
            with_fallbacks(model, resolve_lastmod_path(model, name), fallbacks.get(name, ()))
            for name in fields
        ]

    def __bool__(self) -> bool:
        return bool(self.paths)

    @property
    def is_datetime(self) -> bool:
        """Whether any field carries a time (then dates count as midnight UTC)."""
        return any(p.is_datetime for p in self.paths)

    @property
    def output_field(self) -> models.DateField[Any, Any]:
        return models.DateTimeField() if self.is_datetime else models.DateField()

    def _column(self, path: LastmodPath) -> Any:
        """An expression with one value per row of the model for ``path``."""
        if path.many_valued:
            # A correlated MAX over the relation: one value per row, no
            # duplicated rows in the outer query however many relations.
            inner = (
                self.model._default_manager.filter(pk=OuterRef("pk"))
                .order_by()
                .values("pk")
                .annotate(_latest=Max(path.path))
                .values("_latest")
            )
            expression: Any = Subquery(inner, output_field=path.field)
        else:
            expression = path.source()
        if self.is_datetime and not path.is_datetime:
            expression = Cast(expression, models.DateTimeField())
        return expression

    def row_expression(self) -> Any:
        """The latest content change of each row, as a date or datetime."""
        columns = [self._column(p) for p in self.paths]
        if len(columns) == 1:
            return columns[0]
        return GreatestIgnoringNulls(*columns, output_field=self.output_field)

    @property
    def can_be_missing(self) -> bool:
        """Whether a row can have no lastmod: every path can be empty."""
        return bool(self.paths) and all(p.nullable for p in self.paths)

    def undated(self) -> Q:
        """Rows with no lastmod: no value in any path."""
        condition = Q()
        for path in self.paths:
            if path.many_valued:
                dated = self.model._default_manager.filter(
                    pk=OuterRef("pk"), **{f"{path.path}__isnull": False}
                )
                condition &= Q(~Exists(dated))
            else:
                condition &= path.empty()
        return condition

    def formats_in_sql(self, vendor: str) -> bool:
        return bool(self.paths) and settings.USE_TZ and vendor in SQL_FORMAT_VENDORS

    def text_expression(self) -> W3CDatetime:
        """``row_expression`` formatted as W3C Datetime text, in SQL."""
        return W3CDatetime(self.row_expression(), date_only=not self.is_datetime)

    def page_aggregates(self) -> list[tuple[str, list[LastmodPath]]]:
        """Groups of paths, each aggregated in one grouped query.

        All single-valued paths share the first query (plain columns and
        forward joins do not multiply rows). Each many-valued path gets its own
        query so two reverse relations never multiply each other's rows.
        """
        single = [p for p in self.paths if not p.many_valued]
        groups: list[tuple[str, list[LastmodPath]]] = []
        if single:
            groups.append(("own", single))
        groups.extend((p.path, [p]) for p in self.paths if p.many_valued)
        return groups


# Normalisation and formatting ------------------------------------------------


def to_utc(value: dt.date | dt.datetime | str | None) -> dt.date | dt.datetime | None:
    """Normalise a lastmod value: datetimes to aware UTC, dates unchanged.
    Naive datetimes are taken to be in the current time zone (what Django
    stores with ``USE_TZ = False``).
    """
    if isinstance(value, str):
        # Some backends return computed dates (GREATEST, MAX) as text.
        value = parse_datetime(value) or parse_date(value)
    if value is None or not isinstance(value, dt.datetime):
        return value
    if timezone.is_naive(value):
        value = timezone.make_aware(value, timezone.get_current_timezone())
    return value.astimezone(dt.timezone.utc)


def latest(values: Sequence[LastmodValue]) -> LastmodValue:
    """The latest of ``values``, ignoring ``None``; dates count as midnight UTC."""
    best: dt.date | dt.datetime | None = None
    best_key: dt.datetime | None = None
    for value in values:
        value = to_utc(value)
        if value is None:
            continue
        key = (
            value
            if isinstance(value, dt.datetime)
            else dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
        )
        if best_key is None or key > best_key:
            best, best_key = value, key
    return best


def file_lastmod(newest: LastmodValue, undated: bool) -> LastmodValue:
    """The lastmod of a file (or an index) whose URLs' latest lastmod is
    ``newest``: none when any of them has none (``undated``), as contrib.

    The one home of this rule: a file's newest date would stay put when a
    URL without a date is added, and a conditional GET would answer 304 for
    a file that changed.
    """
    return None if undated else newest


def latest_of_all(values: Sequence[LastmodValue]) -> LastmodValue:
    """``file_lastmod`` of ``values``: their newest, or None when any is None."""
    return file_lastmod(latest(values), any(value is None for value in values))


def day_of(value: Any) -> dt.date | None:
    """The UTC day of a lastmod (a date, a datetime, or W3C text)."""
    if value is None:
        return None
    if isinstance(value, str):
        return dt.date.fromisoformat(value[:10])
    normalised = to_utc(value)
    if isinstance(normalised, dt.datetime):
        return normalised.date()
    return normalised


def format_w3c(value: dt.date | dt.datetime | None) -> str | None:
    """W3C Datetime text: ``YYYY-MM-DDThh:mm:ssZ`` in UTC, or ``YYYY-MM-DD``."""
    value = to_utc(value)
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return value.isoformat()
