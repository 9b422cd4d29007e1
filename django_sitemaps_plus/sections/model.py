"""``ModelSection``: a model's queryset as sitemap files, with lastmod from
its content-change fields and keyset (primary key range) pagination.

Its files are the layout's key ranges: ``blocks`` gives the key blocks'
figures in SQL, ``kept_figures`` keeps them, ``layout`` lays files out from
them (``pagination`` packs) and keeps the layout, ``reads`` reads a file's
rows. The hooks ``layout`` and ``kept_figures`` call (``last_block``,
``block_figures``, ``range_figures``, ``figure_urls``, ``layout_key``,
``range_rows``) are what a section whose rows are not its model's own (the
Wagtail and django CMS pages) overrides.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.db.models import Count
from django.db.models.constants import LOOKUP_SEP
from django.db.models.functions import Cast

from django_sitemaps_plus import names
from django_sitemaps_plus.engine import blocks, bounds, kept_figures, layout, pagination, reads
from django_sitemaps_plus.engine.lastmod import LastmodSpec, day_of
from django_sitemaps_plus.engine.location import LanguageTemplates, LocationTemplate
from django_sitemaps_plus.engine.render import Row
from django_sitemaps_plus.sections.base import FileSizing, Section
from django_sitemaps_plus.sections.checks import ModelSectionChecks, SectionChecks
from django_sitemaps_plus.sections.pages import LastmodCounts, PageInfo, span_info
from django_sitemaps_plus.sites import SiteContext, call_with_site


class ModelSection(Section):
    """A model's rows as sitemap URLs, paginated by primary key ranges.
    Each file is a key range made of whole key blocks (``blocks.py``), packed
    as full as the rows' URLs and bytes allow (``layout.py``,
    ``pagination.py``): file 20 costs what file 1 costs, new rows only ever
    touch the last file, and unchanged files keep their lastmod.
    """

    model: type[models.Model] | None = None
    queryset: models.QuerySet[Any] | None = None
    #: Fields whose change is a real content change (own or related).
    lastmod_fields: Sequence[str] = ()
    #: Own fields standing in, the first with a value, for an own lastmod
    #: field where it is empty: ``{"published_at": ["created_at"]}``.
    lastmod_fallbacks: Mapping[str, Sequence[str]] = {}
    #: Fast path: a URL name reversed once, plus URL kwarg → model field.
    url_name: str | None = None
    url_kwargs: Mapping[str, str] = {}
    #: Blocks whose figures one query reads, a ``UNION ALL`` of one range
    #: aggregate each (``blocks.figures``; SQLite allows 500 members). Few
    #: enough that PostgreSQL's estimate stays under its default
    #: ``jit_above_cost``: at 400 a full read of 10^7 rows spent 4.8 s
    #: compiling (docs/benchmarks.md, "Cost of a change").
    RANGE_UNION_PAGES: ClassVar[int] = 100
    #: Pages are key ranges of the section's layout, not pages of ``items()``.
    defines_own_pages: ClassVar[bool] = True
    #: ``page_info()`` reads a file of the layout: ``listed_info()`` may
    #: answer from the figures the layout was made with instead.
    defines_own_page_info: ClassVar[bool] = False

    def __init__(self, model: type[models.Model] | None = None, **options: Any) -> None:
        super().__init__(**options)
        if model is not None:
            self.model = model
        if self.model is None and self.queryset is not None:
            self.model = self.queryset.model
        if self.model is None:
            raise ImproperlyConfigured(f"{type(self).__name__} needs a model or a queryset")
        self._lastmod_spec: LastmodSpec | None = None
        self._template: LocationTemplate | None = None

    def get_model(self) -> type[models.Model]:
        assert self.model is not None
        return self.model

    def get_name(self) -> str:
        if self.name:
            return self.name
        return names.section_name(str(self.get_model()._meta.verbose_name_plural), "")

    def get_queryset(self, site: Any = None) -> models.QuerySet[Any]:
        """The rows listed. ``site`` is the request's site object
        (``SiteContext.site``: a Sites framework or Wagtail ``Site``), None
        outside a request; an override filters by it to list rows per site.
        Overrides may leave the argument out."""
        queryset: models.QuerySet[Any] = (
            self.queryset if self.queryset is not None else self.get_model()._default_manager
        ).all()
        return queryset

    def site_queryset(self, site: SiteContext | None) -> models.QuerySet[Any]:
        """``get_queryset()`` for ``site`` (handed the site object when it takes one)."""
        queryset: models.QuerySet[Any] = call_with_site(self.get_queryset, site)
        return queryset

    @property
    def lastmod_spec(self) -> LastmodSpec:
        if self._lastmod_spec is None:
            self._lastmod_spec = LastmodSpec(
                self.get_model(), self.lastmod_fields, self.lastmod_fallbacks
            )
        return self._lastmod_spec

    def location_template(self) -> LocationTemplate | None:
        if not self.url_name:
            return None
        if self._template is None:
            self._template = LocationTemplate(self.url_name, self.url_kwargs)
        return self._template

    #: E001, E002, E006, E007 beside the options' checks (``sections.checks``).
    checks_class: ClassVar[type[SectionChecks]] = ModelSectionChecks

    def defines_location(self) -> bool:
        """Whether the class defines its own ``location()`` (else rows are
        located by ``url_name`` or the model's ``get_absolute_url()``)."""
        return type(self).location is not ModelSection.location

    def require_integer_pk(self) -> None:
        """Raise ``ImproperlyConfigured`` unless the model's primary key is an
        integer: files are key ranges (check E006 says so at startup)."""
        pk = self.get_model()._meta.pk
        if not isinstance(pk, models.IntegerField):
            raise ImproperlyConfigured(
                f"Sitemap section {self.get_name()!r}: keyset pagination needs an integer "
                f"primary key; {self.get_model()._meta.label}.pk is a {type(pk).__name__}."
            )

    def block_width(self) -> int:
        """Keys per block of the layout: a block holds at most
        ``BLOCK_URLS`` URLs and a fifth of ``get_limit()`` (pagination.py)."""
        urls = max(1, min(pagination.BLOCK_URLS, self.get_limit() // 5))
        return max(1, urls // self.urls_per_item())

    def file_sizing(self) -> FileSizing:
        """``"bound"`` when the files are sized from SQL, nothing rendered:
        a location spliced from fields (``url_name``) whose longest values
        bound its bytes (``bounds.location_bound``), with no extension."""
        sizing = super().file_sizing()
        if sizing == "measure" and bounds.location_bound(self) is not None:
            return "bound"
        return sizing

    # The layout ----------------------------------------------------------------

    def index_pages(self, site: SiteContext) -> list[PageInfo]:
        # Laid out anew each time from the blocks' figures (kept, and read
        # again where a save moved them; measured blocks come from the
        # cache), and kept for the files.
        return [span_info(span) for span in layout.current(self, site, refresh=True)]

    def compute_layout(self, site: SiteContext, previous: layout.Laid | None = None) -> layout.Laid:
        """The section's files: its blocks' figures (``kept_figures``)
        packed (``layout.lay_out_blocks``; again only where blocks moved
        since ``previous``). Nothing is rendered."""
        width = self.block_width()
        reading = kept_figures.read(self, site, width)
        return layout.lay_out_blocks(self, site, width, reading, previous)

    # Hooks of the layout: a section whose rows are not its model's own
    # (django CMS: page contents keyed by their page) answers these.

    def last_block(self, site: SiteContext, width: int) -> int:
        """The key block of the section's largest key (0: no rows): one
        index lookup, before the tokens and figures of its blocks are read."""
        self.require_integer_pk()
        return blocks.last_block(self.site_queryset(site), width)

    def block_figures(
        self,
        site: SiteContext,
        width: int,
        last: int,
        only: Collection[int] | None = None,
        past: int = 0,
    ) -> dict[int, blocks.BlockFigures]:
        """Each non-empty key block's figures (rows, key sum, lastmod) up to
        block ``last`` (``last_block``): of every block (``only`` None), else
        of the blocks ``only`` and of every block past block ``past``
        (``kept_figures``: the blocks a save moved, and those new rows
        opened). ``RANGE_UNION_PAGES`` blocks a query. With files sized by
        bound, the longest value in bytes of each location field too."""
        bound = bounds.location_bound(self) if self.measures_files() else None
        return blocks.figures(
            self.site_queryset(site),
            self.lastmod_spec,
            width,
            self.RANGE_UNION_PAGES,
            last,
            only,
            past,
            byte_paths=bound.paths if bound is not None else (),
        )

    def range_figures(
        self, site: SiteContext, after: int | None, last: int, key_sum: bool = False
    ) -> blocks.BlockFigures | None:
        """The figures of the rows with ``after < key <= last`` (a file), or
        None when it has none; ``key_sum``: with their key sum (a build's
        fingerprint of the file), else 0."""
        found = blocks.range_figures(
            self.site_queryset(site), self.lastmod_spec, [(0, after, last)], key_sum=key_sum
        )
        return found.get(0)

    def figure_urls(self, figures: blocks.BlockFigures) -> int:
        """The URLs ``figures``' rows give at most (a row gives ``urls_per_item()``)."""
        return figures.count * self.urls_per_item()

    def layout_key(self, row: Row) -> int:
        """The key a row is laid out by (its item's primary key)."""
        return int(self.item_pk(row[0]))

    # Which files a change touches ------------------------------------------------

    def files_keyed_by_blocks(self) -> bool:
        """Whether the cached files are keyed by the key blocks they hold, so
        a save re-renders only the file holding its row (``changed_keys``):
        not when the files are the section's own (``defines_own_page_info``,
        ``writes_own_entries``), which a save makes cold all together."""
        return not (self.defines_own_page_info or self.writes_own_entries)

    def changed_keys(self, model: type[models.Model], instance: Any) -> set[int] | None:
        """The layout keys whose rows a save or delete of ``instance`` (a
        ``model``) changes, or None when that cannot be told without a
        query (then every file of the section is made cold).

        A row of the section's model (or of a subclass): its own key. A row
        one reverse foreign key away on a ``lastmod_fields`` or ``url_kwargs``
        path (``comments__created_at``): its parent's key, from its foreign
        key column (the receivers also ask this of the row as stored before
        a save, for the parent it leaves). Anything else (a model the
        queryset joins, a ``through`` table, a longer path): None.
        """
        own = self.get_model()
        if issubclass(model, own):
            return {instance.pk} if isinstance(instance.pk, int) else None
        keys: set[int] = set()
        found = False
        for path in [*self.lastmod_fields, *self.url_kwargs.values()]:
            parts = path.split(LOOKUP_SEP)
            try:
                field: Any = own._meta.get_field(parts[0])
            except Exception:
                continue
            if getattr(field, "related_model", None) is None or not issubclass(
                model, field.related_model
            ):
                continue
            if len(parts) != 2 or not isinstance(field, models.ManyToOneRel):
                return None
            found = True
            key = getattr(instance, field.field.attname, None)
            if key is not None:
                keys.add(key)
        if not found or any(not isinstance(key, int) for key in keys):
            # On no path of ours (a model ``invalidated_by`` names), or not
            # an integer key.
            return None
        return keys

    def listed_info(self, number: int, site: SiteContext) -> PageInfo | None:
        """File ``number`` of the kept layout, with the figures it was laid
        out with: no query when a layout is kept (one is made otherwise).
        A subclass's own ``page_info`` (``defines_own_page_info``) answers
        instead: those figures are not what it would say."""
        if self.defines_own_page_info:
            return self.page_info(number, site)
        if number < 1:
            return None
        span, _ = layout.file_span(self, number, site)
        return None if span is None else span_info(span)

    def page_info(self, number: int, site: SiteContext) -> PageInfo | None:
        """File ``number`` of the layout, with its rows' figures read now (one
        aggregate per lastmod group, as the index's): a write that bypassed
        the save signals still shows in the file's lastmod and URL count."""
        if number < 1:
            return None
        span, fresh = layout.file_span(self, number, site)
        if span is None or fresh:
            return None if span is None else span_info(span)
        figures = self.range_figures(site, span.after, span.last)
        if figures is None:
            return None
        return PageInfo(number, figures.file_lastmod, self.figure_urls(figures), prepared=span)

    def page_rows(
        self, number: int, site: SiteContext, info: PageInfo | None = None
    ) -> Iterator[list[Row]]:
        """File ``number``'s rows: ``range_rows`` of its key range (what
        ``page_info`` found, or the layout's)."""
        if info is not None and isinstance(info.prepared, pagination.Span):
            span: pagination.Span | None = info.prepared
        else:
            span = layout.file_span(self, number, site)[0]
        if span is None:
            return iter(())
        return self.range_rows(span.after, span.last, site)

    def range_rows(self, after: int | None, last: int, site: SiteContext) -> Iterator[list[Row]]:
        """The rows with ``after < key <= last``, in key order and batches,
        as a file holds them: what the layout measures (``layout``) and a
        file reads. A section whose rows are not its model's own (the Wagtail
        and django CMS pages) overrides this, and ``layout_key`` if a row's
        key is not its item's primary key."""
        rows = self.site_queryset(site).filter(**blocks.bounds(after, last)).order_by("pk")
        return reads.model_rows(self, rows, site)

    def lastmod_counts(self, site: SiteContext) -> LastmodCounts:
        """The section's rows grouped by the UTC day of their lastmod
        expression: one query, whatever the size of the section. A subclass
        whose files are its own (``defines_own_page_info``, a news window;
        ``writes_own_entries``) is counted from what its files hold."""
        if self.defines_own_page_info or self.writes_own_entries:
            return super().lastmod_counts(site)
        queryset = self.site_queryset(site).order_by()
        per_item = self.urls_per_item()
        counts = LastmodCounts()
        if not self.lastmod_spec:
            counts.add(None, queryset.count() * per_item)
            return counts
        day = Cast(self.lastmod_spec.row_expression(), models.DateField())
        rows = (
            queryset.annotate(_sitemaps_day=day)
            .values("_sitemaps_day")
            .annotate(_n=Count("pk"))
            .values_list("_sitemaps_day", "_n")
        )
        for value, number in rows:
            counts.add(day_of(value), number * per_item)
        return counts

    def location_in(
        self, language: str, item: Any, values: Sequence[Any] | None = None
    ) -> str | None:
        # The fast path: the URL pattern reversed once per language.
        if values is None:
            return super().location_in(language, item, values)
        return self._language_templates.location(language, values)

    def locators(self, rows: Sequence[Row]) -> list[Callable[[str], str | None]]:
        if not rows or rows[0][3] is None:
            return super().locators(rows)
        # Fast path: each language's paths for the whole batch in one splice.
        return self._language_templates.locators(
            [(row[0], row[3]) for row in rows], self.location_in
        )

    @cached_property
    def _language_templates(self) -> LanguageTemplates:
        return LanguageTemplates(self.url_name or "", self.url_kwargs)

    def drop_item(self, item: Any, why: str) -> None:
        if not isinstance(item, models.Model):
            item = f"{self.get_model()._meta.label} pk={item}"
        super().drop_item(item, why)
