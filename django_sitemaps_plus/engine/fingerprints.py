"""What a section's kept things are keyed by: ``signature`` (the site, the
language, the URLconf and the section's settings, as ``settings_token``
writes them) and the generation ``layout.forget_sizes`` replaces. A kept
layout, kept block figures or a measured block is read back only under the
signature it was made with (docs/pagination.md, "What is kept, and where").
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.utils import translation
from django.utils.functional import Promise

from django_sitemaps_plus.engine import pagination

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")


def signature(section: Section, site: SiteContext, name: str | None = None) -> str:
    """What the layout and a block's entries depend on besides the rows:
    the site, the language, and the section's settings, its extensions'
    public attributes among them (``settings_token``: the same text in
    every process). ``name``: the section's, when the caller has it."""
    extensions = [
        (_qualified(type(ext)), sorted((k, settings_token(v)) for k, v in vars(ext).items()
                                       if not k.startswith("_")))
        for ext in section.extensions
    ]  # fmt: skip
    return repr(
        (
            type(section).__module__,
            type(section).__qualname__,
            name or section.get_name(),
            site.cache_key,
            translation.get_language(),
            getattr(settings, "ROOT_URLCONF", None),
            getattr(section, "url_name", None),
            section.get_limit(),
            section.get_max_loc_length(),
            section.changefreq,
            str(section.priority),
            extensions,
        )
    )


#: Values that are their own token.
_SCALARS = (type(None), bool, int, float, complex, str, bytes)


#: A default ``repr`` names the object's address, which differs per process.
_ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")


def settings_token(value: Any, depth: int = 0) -> Any:
    """``value`` as plain data whose ``repr`` is the same in every process
    for the same setting: containers item by item (sets and mappings sorted),
    an ``Enum`` member, class or function by its qualified name, a model
    instance by its label and key, a queryset by its SQL, a lazy string as text, an object with a
    ``repr`` of its own (a date, a ``Decimal``, a dataclass) by it, any
    addresses left out; another object by its class and public attributes.
    No address, no hash order: a setting changed in place changes it."""
    if isinstance(value, _SCALARS) and not isinstance(value, Enum):
        return value
    if depth > 5:
        return _qualified(type(value))
    deeper = depth + 1
    if isinstance(value, Enum):
        return (_qualified(type(value)), value.name)
    if isinstance(value, Promise):
        return str(value)
    if isinstance(value, list | tuple):
        return (type(value).__name__, [settings_token(v, deeper) for v in value])
    if isinstance(value, set | frozenset):
        return ("set", sorted((settings_token(v, deeper) for v in value), key=repr))
    if isinstance(value, Mapping):
        pairs = [(settings_token(k, deeper), settings_token(v, deeper)) for k, v in value.items()]
        return ("mapping", sorted(pairs, key=repr))
    if isinstance(value, models.Model):
        return (value._meta.label, value.pk)
    if isinstance(value, models.QuerySet):
        # Its SQL, never its repr (which runs it): a ``Prefetch``'s queryset.
        return ("queryset", value.model._meta.label, _query_text(value))
    if isinstance(value, type):
        return _qualified(value)
    if isinstance(value, functools.partial):
        return (
            "partial",
            settings_token(value.func, deeper),
            settings_token(value.args, deeper),
            settings_token(value.keywords, deeper),
        )
    if inspect.ismethod(value):
        return ("method", _qualified(value.__func__), settings_token(value.__self__, deeper))
    if inspect.isroutine(value):
        return _qualified(value)
    if getattr(type(value), "__repr__", None) is not object.__repr__:
        # Its own repr (a date, a Decimal, a dataclass), without addresses.
        return _ADDRESS_RE.sub("", repr(value))
    attributes = getattr(value, "__dict__", {})
    return (
        _qualified(type(value)),
        sorted(
            (k, settings_token(v, deeper)) for k, v in attributes.items() if not k.startswith("_")
        ),
    )


def _query_text(queryset: models.QuerySet[Any]) -> str:
    try:
        return str(queryset.query)
    except Exception:  # EmptyResultSet (``.none()``) and the like: no SQL to show.
        return ""


def _qualified(thing: Any) -> str:
    """A class's or function's module and qualified name (lambdas and
    local functions included: their names hold where they are defined)."""
    module = getattr(thing, "__module__", None)
    name = getattr(thing, "__qualname__", None) or getattr(thing, "__name__", type(thing).__name__)
    return f"{module}.{name}" if module else str(name)


def generation_key(section: Section) -> str:
    """The token ``forget_sizes`` replaces: every measured block, and the
    kept block figures (``kept_figures``), are read again."""
    return pagination.fingerprint_key("generation", section.get_name())
