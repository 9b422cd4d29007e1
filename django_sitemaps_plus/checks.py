"""System checks: misconfiguration is reported by ``manage.py check``.

Every problem has a stable id, listed in docs/checks.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.apps import apps
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import models
from django.urls import NoReverseMatch

from django_sitemaps_plus import protocol
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.lastmod import LastmodFieldError, LastmodSpec

ID = "sitemaps_plus"


@register(Tags.compatibility)
def check_settings(app_configs: Sequence[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    base = conf.BASE_URL
    if base is not None:
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
            errors.append(
                Error(
                    f"SITEMAPS_PLUS['BASE_URL'] = {base!r} is not an absolute http(s) URL of a "
                    "site root.",
                    hint="Use a scheme and host only, e.g. 'https://example.com'.",
                    id=f"{ID}.E003",
                )
            )
    elif not apps.is_installed("django.contrib.sites"):
        errors.append(
            Warning(
                "Sitemap URLs will be built from each request's Host header.",
                hint="Set SITEMAPS_PLUS['BASE_URL'] (or use django.contrib.sites) so every "
                "sitemap names one canonical scheme and host.",
                id=f"{ID}.W002",
            )
        )
    errors.extend(_limit_errors("SITEMAPS_PLUS['LIMIT']", conf.get("LIMIT")))
    errors.extend(_loc_length_errors("SITEMAPS_PLUS['MAX_LOC_LENGTH']", conf.get("MAX_LOC_LENGTH")))
    return errors


def _limit_errors(where: str, limit: Any) -> list[CheckMessage]:
    if isinstance(limit, int) and 1 <= limit <= protocol.MAX_URLS_PER_FILE:
        return []
    return [
        Error(
            f"{where} = {limit!r}: a sitemap file holds 1 to {protocol.MAX_URLS_PER_FILE:,} URLs.",
            hint="sitemaps.org/protocol.html#index: at most 50,000 URLs per file.",
            id=f"{ID}.E004",
        )
    ]


def _loc_length_errors(where: str, length: Any) -> list[CheckMessage]:
    if isinstance(length, int) and 12 <= length <= protocol.MAX_LOC_LENGTH:
        return []
    return [
        Error(
            f"{where} = {length!r}: must be 12 to {protocol.MAX_LOC_LENGTH:,} characters.",
            hint="sitemaps.org: a URL must be less than 2,048 characters.",
            id=f"{ID}.E009",
        )
    ]


@register(Tags.compatibility)
def check_sections(app_configs: Sequence[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    from django_sitemaps_plus.registry import SECTION_NAME_RE, site
    from django_sitemaps_plus.sections import ContribSection, ModelSection

    errors: list[CheckMessage] = []
    for section in site:
        name = section.get_name()
        label = f"Sitemap section {name!r}"
        if not SECTION_NAME_RE.fullmatch(name):
            errors.append(
                Error(
                    f"{label}: the name must be a lowercase slug (it is used in file names).",
                    hint="Set name = 'articles' (letters, digits, '-' and '_').",
                    obj=section,
                    id=f"{ID}.E005",
                )
            )
        if section.limit is not None:
            errors.extend(_limit_errors(f"{label}: limit", section.limit))
        if section.max_loc_length is not None:
            errors.extend(_loc_length_errors(f"{label}: max_loc_length", section.max_loc_length))
        if section.changefreq is not None and section.changefreq not in protocol.CHANGEFREQ_VALUES:
            errors.append(
                Error(
                    f"{label}: changefreq {section.changefreq!r} is not a protocol value.",
                    hint="One of: " + ", ".join(sorted(protocol.CHANGEFREQ_VALUES)) + ".",
                    obj=section,
                    id=f"{ID}.E008",
                )
            )
        if section.priority is not None and not (
            protocol.MIN_PRIORITY <= float(section.priority) <= protocol.MAX_PRIORITY
        ):
            errors.append(
                Error(
                    f"{label}: priority {section.priority!r} is outside 0.0 to 1.0.",
                    obj=section,
                    id=f"{ID}.E008",
                )
            )
        # Each extension checks its own configuration (ids E101-E139).
        for extension in section.extensions:
            errors.extend(extension.check(section))
        if isinstance(section, ModelSection):
            errors.extend(_model_section_errors(section, label))
        elif isinstance(section, ContribSection):
            errors.extend(_unordered_warning(label, section.sitemap.items()))
        else:
            errors.extend(_unordered_warning(label, section.items()))
    return errors


def _unordered_warning(label: str, items: Any) -> list[CheckMessage]:
    if isinstance(items, models.QuerySet) and not items.ordered:
        return [
            Warning(
                f"{label}: items() returns an unordered queryset, so its pages may overlap "
                "or skip rows between requests.",
                hint="Add .order_by('pk') (or another unique ordering) to items().",
                id=f"{ID}.W001",
            )
        ]
    return []


def _model_section_errors(section: Any, label: str) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    model = section.get_model()
    try:
        LastmodSpec(model, section.lastmod_fields)
    except LastmodFieldError as exc:
        errors.append(
            Error(
                f"{label}: {exc}.",
                hint="lastmod_fields names DateField/DateTimeField paths, e.g. "
                "'updated_at' or 'comments__created_at'.",
                obj=section,
                id=f"{ID}.E001",
            )
        )
    if not isinstance(model._meta.pk, models.IntegerField):
        errors.append(
            Error(
                f"{label}: {model._meta.label} has a {type(model._meta.pk).__name__} primary "
                "key; ModelSection paginates by integer primary key ranges.",
                hint="Register a Section (or a contrib Sitemap) for this model instead.",
                obj=section,
                id=f"{ID}.E006",
            )
        )
    from django_sitemaps_plus.sections import ModelSection

    overrides_location = type(section).location is not ModelSection.location
    if section.url_name:
        errors.extend(_url_name_errors(section, label, model))
    elif not overrides_location and not hasattr(model, "get_absolute_url"):
        errors.append(
            Error(
                f"{label}: {model._meta.label} has no get_absolute_url() and the section "
                "defines neither location() nor url_name.",
                hint="Add get_absolute_url() to the model, or set url_name and url_kwargs.",
                obj=section,
                id=f"{ID}.E002",
            )
        )
    return errors


def _url_name_errors(section: Any, label: str, model: type[models.Model]) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for kwarg, field in section.url_kwargs.items():
        try:
            model._meta.get_field(field)
        except Exception:
            errors.append(
                Error(
                    f"{label}: url_kwargs[{kwarg!r}] names {field!r}, which is not a field "
                    f"of {model._meta.label}.",
                    obj=section,
                    id=f"{ID}.E007",
                )
            )
    if errors:
        return errors
    try:
        template = section.location_template()
        if not template.fast:
            # No probe value reversed: the name may not exist at all.
            from django.urls import reverse

            try:
                reverse(section.url_name, kwargs=dict.fromkeys(section.url_kwargs, "1"))
            except NoReverseMatch as missing:
                if "not found" in str(missing):
                    raise
    except NoReverseMatch as exc:
        errors.append(
            Error(
                f"{label}: url_name {section.url_name!r} does not reverse with kwargs "
                f"{sorted(section.url_kwargs)}: {exc}",
                obj=section,
                id=f"{ID}.E007",
            )
        )
    return errors
