"""A section's system checks, as ``django.contrib.admin.checks`` holds
``ModelAdmin``'s: ``Section.check()`` returns ``checks_class().check(section)``.

``SectionChecks`` checks what every section has: its name, limits,
changefreq and priority, its extensions (their own ``check()``), the engine
flags a hook needs (W009), and a sample of ``items()`` read with every query
refused (W001, W008): checks run before ``migrate``. ``ModelSectionChecks``
adds a model section's: lastmod fields (E001), a location (E002, E007), an
integer primary key (E006). A section adds its own by overriding ``check()``
or naming a ``checks_class`` of its own. The ids are in docs/checks.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any, cast

from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import DatabaseError, connections, models
from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus import names, protocol
from django_sitemaps_plus.conf import SETTINGS
from django_sitemaps_plus.engine.lastmod import LastmodFieldError, LastmodSpec
from django_sitemaps_plus.extensions.base import section_error
from django_sitemaps_plus.sites import call_with_site

if TYPE_CHECKING:
    from django_sitemaps_plus.sections.base import Section
    from django_sitemaps_plus.sections.model import ModelSection


#: Each engine flag and the hooks whose override it declares: a hook
#: defined while its flag is False is check W009 (``Section.check``).
FLAG_HOOKS: dict[str, tuple[str, ...]] = {
    "varies_per_item": ("get_changefreq", "get_priority"),
    "has_lastmod": ("lastmod",),
    "defines_own_pages": ("index_pages",),
    "writes_own_entries": ("page_entries",),
    "defines_own_page_info": ("page_info",),
    "changes_with_time": ("expires_at",),
}
#: Items whose ``location()`` check W008 tries: the first of ``items()``.
LOCATION_SAMPLE = 10


def undeclared_hook(obj: object, flag: str, hooks: Sequence[str]) -> str | None:
    """The first of ``hooks`` that ``obj`` (a section or an extension) takes
    from nearer than where its ``flag`` is declared (its own attributes,
    given as options, then its class's MRO), or None.

    The engine asks the flag, never which methods are defined: a hook
    overridden without its flag may not be called (check W009).
    """
    for namespace in (vars(obj), *(vars(klass) for klass in type(obj).__mro__)):
        if flag in namespace:
            return None
        hook = next((name for name in hooks if name in namespace), None)
        if hook is not None:
            return hook
    return None


class _QueryRefused(Exception):
    """Raised by the execute wrapper of ``_queries_refused``."""


def _refuse_query(*args: Any) -> Any:
    raise _QueryRefused


@contextmanager
def _queries_refused() -> Iterator[None]:
    """Every query on every connection raises ``_QueryRefused`` in the block:
    system checks run before ``migrate`` (the tables may not exist yet) and
    must not query."""
    with ExitStack() as stack:
        for connection in connections.all():
            stack.enter_context(connection.execute_wrapper(_refuse_query))
        yield


class SectionChecks:
    """The checks of every section (``Section.checks_class``)."""

    def check(self, section: Section) -> list[CheckMessage]:
        """This section's system check messages, as ``ModelAdmin.check()``
        (``checks.check_sections`` asks each registered section): its options,
        then what a sample of ``items()`` says. No query is run."""
        items = partial(call_with_site, section.items, None)
        return [
            *self.options(section),
            *self.unordered(section, items),
            *self.locations(section, items, section.location),
        ]

    def label(self, section: Section) -> str:
        return f"Sitemap section {section.get_name()!r}"

    def options(self, section: Section) -> list[CheckMessage]:
        """The name (E005), limits (E004, E009), changefreq and priority
        (E008), each extension's own checks (E101-E139) and the flags (W009)."""
        label = self.label(section)
        errors: list[CheckMessage] = []
        if not names.SECTION_NAME_RE.fullmatch(section.get_name()):
            message = "the name must be a lowercase slug (it is used in file names)."
            hint = "Set name = 'articles' (letters, digits, '-' and '_')."
            errors.append(section_error(section, message, "sitemaps_plus.E005", hint))
        if section.limit is not None:
            errors.extend(SETTINGS["LIMIT"].errors(f"{label}: limit", section.limit))
        if section.max_loc_length is not None:
            where = f"{label}: max_loc_length"
            errors.extend(SETTINGS["MAX_LOC_LENGTH"].errors(where, section.max_loc_length))
        if section.changefreq is not None and section.changefreq not in protocol.CHANGEFREQ_VALUES:
            message = f"changefreq {section.changefreq!r} is not a protocol value."
            hint = "One of: " + ", ".join(sorted(protocol.CHANGEFREQ_VALUES)) + "."
            errors.append(section_error(section, message, "sitemaps_plus.E008", hint))
        if section.priority is not None and not (
            protocol.MIN_PRIORITY <= float(section.priority) <= protocol.MAX_PRIORITY
        ):
            message = f"priority {section.priority!r} is outside 0.0 to 1.0."
            errors.append(section_error(section, message, "sitemaps_plus.E008"))
        for extension in section.extensions:
            errors.extend(extension.check(section))
        return errors + self.undeclared_flags(section)

    def undeclared_flags(self, section: Section) -> list[CheckMessage]:
        """W009: a hook overridden (or given as an option) while its flag
        stays False: the engine asks the flag, so the hook may not be called."""
        found = [
            (type(section).__qualname__, hook, flag)
            for flag, hooks in FLAG_HOOKS.items()
            if not getattr(section, flag) and (hook := undeclared_hook(section, flag, hooks))
        ]
        found += [
            (f"extension {type(extension).__qualname__}", "versions", "gives_versions")
            for extension in section.extensions
            if not extension.gives_versions
            and undeclared_hook(extension, "gives_versions", ("versions",))
        ]
        return [
            section_error(
                section,
                f"{owner} defines {hook}() but leaves {flag} False; the engine asks "
                f"{flag}, not which methods are defined, so {hook}() may not be called.",
                "sitemaps_plus.W009",
                f"Set {flag} = True beside {hook}() (or {flag} = False to say it is not "
                "needed): docs/sections.md, 'What the engine asks a section'.",
                warning=True,
            )
            for owner, hook, flag in found
        ]

    def unordered(self, section: Section, items_method: Callable[[], Any]) -> list[CheckMessage]:
        """W001: ``items()`` returns an unordered QuerySet. An ``items()`` that
        queries (``list(...)``, a count) is not inspected: its query is
        refused before it reaches the database."""
        with _queries_refused():
            try:
                items = items_method()
            except (_QueryRefused, DatabaseError):
                return []
        if isinstance(items, models.QuerySet) and not items.ordered:
            return [
                Warning(
                    f"{self.label(section)}: items() returns an unordered queryset, so its "
                    "pages may overlap or skip rows between requests.",
                    hint="Add .order_by('pk') (or another unique ordering) to items().",
                    id="sitemaps_plus.W001",
                )
            ]
        return []

    def locations(
        self, section: Section, items_method: Callable[[], Any], locate: Callable[[Any], Any]
    ) -> list[CheckMessage]:
        """W008: ``location()`` raised for every item of a sample (the first
        ``LOCATION_SAMPLE`` of ``items()``), so the section's files would list
        no URL: the index leaves them out (``listed_pages``), and the site
        owner should know. Only items that come without a query (a list of URL
        names or paths) are sampled; a location that queries is not judged."""
        failures: list[str] = []
        with _queries_refused():
            try:
                items = items_method()
                if isinstance(items, models.QuerySet):
                    return []
                sample = list(islice(items, LOCATION_SAMPLE))
                for item in sample:
                    try:
                        locate(item)
                    except (_QueryRefused, DatabaseError):
                        return []
                    except Exception as exc:
                        failures.append(f"{item!r} ({type(exc).__name__}: {exc})")
                    else:
                        return []
            except Exception:  # items() queried or failed: not this check's to judge
                return []
        if not failures:
            return []
        shown = "; ".join(failures[:3]) + ("; ..." if len(failures) > 3 else "")
        return [
            Warning(
                f"{self.label(section)}: location() failed for each of the first "
                f"{len(failures)} items of items(): {shown}. Its files would list no URL, "
                "so the index leaves them out (and an error is logged when it does).",
                hint="Fix location() or get_absolute_url(), or the URL names items() "
                "lists: each must be a URL name of this project's URLconf (or a path).",
                id="sitemaps_plus.W008",
            )
        ]


class ModelSectionChecks(SectionChecks):
    """A model section's checks (``ModelSection.checks_class``): the
    options' (``SectionChecks.options``), then the model's."""

    def check(self, section: Section) -> list[CheckMessage]:
        """The options' checks (``options``), then the model's: lastmod
        fields (E001), an integer key (E006), a location (E002, E007)."""
        section = cast("ModelSection", section)
        errors = self.options(section)
        model = section.get_model()
        try:
            LastmodSpec(model, section.lastmod_fields, section.lastmod_fallbacks)
        except LastmodFieldError as exc:
            hint = (
                "lastmod_fields names DateField/DateTimeField paths, e.g. 'updated_at' or "
                "'comments__created_at'; lastmod_fallbacks maps one of them (an own field) "
                "to own fields of the same kind."
            )
            errors.append(section_error(section, f"{exc}.", "sitemaps_plus.E001", hint))
        try:
            section.require_integer_pk()
        except ImproperlyConfigured as exc:
            errors.append(
                Error(
                    str(exc),
                    hint="Register a Section (or a contrib Sitemap) for this model instead.",
                    obj=section,
                    id="sitemaps_plus.E006",
                )
            )
        if section.url_name:
            errors.extend(self.url_name(section))
        elif not section.defines_location() and not hasattr(model, "get_absolute_url"):
            message = (
                f"{model._meta.label} has no get_absolute_url() and the section defines "
                "neither location() nor url_name."
            )
            hint = "Add get_absolute_url() to the model, or set url_name and url_kwargs."
            errors.append(section_error(section, message, "sitemaps_plus.E002", hint))
        return errors

    def url_name(self, section: ModelSection) -> list[CheckMessage]:
        """E007: ``url_kwargs`` names fields of the model, and ``url_name``
        reverses with them."""
        model = section.get_model()
        errors: list[CheckMessage] = []
        for kwarg, field_name in section.url_kwargs.items():
            try:
                model._meta.get_field(field_name)
            except FieldDoesNotExist:
                message = (
                    f"url_kwargs[{kwarg!r}] names {field_name!r}, which is not a field of "
                    f"{model._meta.label}."
                )
                errors.append(section_error(section, message, "sitemaps_plus.E007"))
        if errors:
            return errors
        try:
            template = section.location_template()
            if template is not None and not template.fast:
                # No probe value reversed: the name may not exist at all.
                try:
                    reverse(str(section.url_name), kwargs=dict.fromkeys(section.url_kwargs, "1"))
                except NoReverseMatch as missing:
                    if "not found" in str(missing):
                        raise
        except NoReverseMatch as exc:
            message = (
                f"url_name {section.url_name!r} does not reverse with kwargs "
                f"{sorted(section.url_kwargs)}: {exc}"
            )
            errors.append(section_error(section, message, "sitemaps_plus.E007"))
        return errors
