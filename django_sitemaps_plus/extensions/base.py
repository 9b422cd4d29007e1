"""The plug-in point for extension elements (images, news, video, hreflang)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import FieldDoesNotExist
from django.db import models

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine.location import to_uri
from django_sitemaps_plus.sites import ascii_origin

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext


class Extension:
    """Extension children for the ``<url>`` entries of a section.
    A section lists its extensions in ``extensions``. The writer declares
    ``prefix``/``namespace`` on the root of the section's files and calls,
    for each batch of items of a page, ``fetch`` once (one query per batch,
    never one per URL), then ``children`` per item.
    """

    prefix: ClassVar[str]
    namespace: ClassVar[str]
    #: Whether ``versions()`` gives items their entries (hreflang does): the
    #: engine then leaves an item's own location to it. A subclass that
    #: defines ``versions()`` sets it (check W009 warns when it does not).
    gives_versions: ClassVar[bool] = False

    def max_bytes(self, section: Section) -> int:
        """Upper bound of this extension's bytes inside one ``<url>``.

        A section with extensions has its files sized from its entries'
        measured bytes (pagination.py); this bound lets a small section be
        laid out without measuring (``Section.fits_unmeasured``) and sizes
        the blocks not measured yet (``worst_entry_bytes()``), so it must
        never be below what the extension can write.
        """
        return 0

    def fetch(self, section: Section, items: Sequence[Any]) -> Sequence[Any]:
        """Data for each of ``items`` (aligned with it), in as few queries as possible.

        For a ``ModelSection`` the items are primary keys on the fast path
        (``url_name``) and instances otherwise; ``section.item_pk(item)`` gives
        the key either way. Hooks documented to get the item get it from
        ``instances()`` (one query per batch on the fast path), never a key.
        """
        return [None] * len(items)

    def children(self, section: Section, item: Any, data: Any, site: SiteContext) -> str:
        """The XML of this extension's children for one ``<url>`` (escaped)."""
        return ""

    def urls_per_item(self, section: Section) -> int:
        """Most ``<url>`` entries one item gives through this extension.

        1 for extensions that only add children. hreflang gives one entry per
        language version, so a section's files hold ``urls_per_file //
        urls_per_item`` items: the 50,000-URL count and the byte cap hold for
        the entries, not the items.
        """
        return 1

    def versions(
        self,
        section: Section,
        item: Any,
        data: Any,
        site: SiteContext,
        locate: Callable[[str], str | None],
    ) -> Sequence[tuple[str, str]] | None:
        """The item's ``<url>`` entries as (absolute URL, children), or None.

        None (the default) keeps the item's one location. An extension that
        gives an item several entries (``gives_versions``) returns them here (at most
        ``urls_per_item``); ``locate(language)`` is the item's location with
        that language active (a path or an absolute URL, None when it does
        not reverse). The children returned are written before those of
        ``children()`` of every extension.
        """
        return None

    def check(self, section: Section) -> list[CheckMessage]:
        """System check messages for ``section``'s use of this extension."""
        return []


# Helpers shared by the extensions ------------------------------------------------


def section_error(
    section: Any, message: str, check_id: str, hint: str | None = None, *, warning: bool = False
) -> CheckMessage:
    """A check's ``Error`` (``Warning`` with ``warning``) about ``section``:
    ``"Sitemap section 'name': <message>"``."""
    kind = Warning if warning else Error
    label = f"Sitemap section {section.get_name()!r}"
    return kind(f"{label}: {message}", hint=hint, obj=section, id=check_id)


def source_errors(
    section: Any, name: str, method: str | None, fields: str, ids: tuple[str, str]
) -> list[CheckMessage]:
    """Where ``name`` (``Images``, ``Video``) reads its values: a ``method``
    that the section or its model has (else ``ids[0]``), or else ``fields`` of
    a ``ModelSection`` (else ``ids[1]``)."""
    model = getattr(section, "model", None)
    if method is not None:
        if hasattr(section, method) or (model is not None and hasattr(model, method)):
            return []
        message = f"{name}(method={method!r}): neither the section nor the model has that method."
        return [section_error(section, message, ids[0])]
    if model is None:
        message = f"{name}({fields}) needs a ModelSection; use method=... on other sections."
        return [section_error(section, message, ids[1])]
    return []


#: A path that ``location.to_uri`` leaves unchanged (only URI characters, no
#: bracket, no fragment): already a URI, it needs no encoding or parsing.
URI_PATH_RE = re.compile(r"/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*")
#: An absolute http(s) URL made only of URI characters, with a host.
_ABSOLUTE_URI_RE = re.compile(
    r"https?://[A-Za-z0-9.\-]+(?::[0-9]+)?"
    r"(?:[/?](?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?"
)
#: A stored file name whose storage URL is the storage's prefix plus the name.
_PLAIN_NAME_RE = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9_\-./]*")


def ascii_host(url: str) -> str | None:
    """``url`` with an internationalised host in its ASCII (IDNA) form, as
    ``sites.ascii_origin`` writes the site's own base URL; None when the
    host is not a valid domain name. Paths and ASCII hosts are kept as given
    (their other non-ASCII characters are left to ``iri_to_uri``)."""
    if url.isascii():
        return url
    try:
        if urlsplit(url).netloc.isascii():
            return url
        return ascii_origin(url)
    except (UnicodeError, ValueError):
        return None


def media_url(value: Any, site: SiteContext, max_length: int) -> tuple[str | None, str | None]:
    """An image, video or thumbnail address made absolute: ``(url, None)`` or ``(None, why)``.
    ``value`` is a ``FieldFile`` (its storage's URL), an absolute URL (any
    host: a CDN or a storage bucket is fine for media), a protocol-relative
    ``//host/path`` (the site's scheme is used) or a path from the site's root
    (``/media/a.jpg``, made absolute on the site). Non-ASCII is percent-encoded.
    """
    if hasattr(value, "url") and hasattr(value, "name"):  # a FieldFile
        if not value.name:
            return None, "is empty"
        value = value.url
    text = str(value).strip() if value is not None else ""
    if not text:
        return None, "is empty"
    if text.startswith("/") and not text.startswith("//") and URI_PATH_RE.fullmatch(text):
        # The common case, checked without parsing: a URI path on the site.
        text = site.absolute(text)
    elif not _ABSOLUTE_URI_RE.fullmatch(text):
        ascii_text = ascii_host(text)
        if ascii_text is None:
            return None, f"({value!r}) has a host that is not a valid domain name"
        try:
            text = to_uri(ascii_text)
        except ValueError as exc:
            return None, f"({value!r}) {exc}"
        if text.startswith("//"):
            text = f"{site.scheme}:{text}"
        elif text.startswith("/"):
            text = site.absolute(text)
        problem = protocol.loc_problem(text)
        if problem:
            return None, f"({value!r}) is not usable: {problem}"
    if len(text) > max_length:
        return None, f"is longer than {max_length:,} characters"
    return text, None


def resolve_field(model: Any, path: str) -> Any:
    """The model field at the end of ``path`` (``"cover"``, ``"images__file"``).
    Raises ``LookupError`` with a readable message when a part is missing.
    """
    current = model
    field: Any = None
    for part in path.split("__"):
        if current is None:
            raise LookupError(f"{path!r}: {part!r} follows a field that is not a relation")
        try:
            field = current._meta.get_field(part)
        except FieldDoesNotExist:
            raise LookupError(f"{path!r}: {current._meta.label} has no field {part!r}") from None
        current = field.related_model if field.is_relation else None
    return field


def instances(section: Section, items: Sequence[Any]) -> list[Any]:
    """``items`` as the objects hooks are documented to receive.
    On a ``ModelSection``'s fast path (``url_name``) the items are primary
    keys: their instances are loaded in one ``in_bulk`` query for the batch
    (None for a row deleted since). Instances, and the items of other
    sections, are returned as they are.
    """
    if not items or isinstance(items[0], models.Model) or not hasattr(section, "get_model"):
        return list(items)
    model: type[models.Model] = section.get_model()
    keys = [section.item_pk(item) for item in items]
    loaded = model._base_manager.in_bulk(keys)
    return [loaded.get(key) for key in keys]


def method_values(
    section: Section,
    items: Sequence[Any],
    name: str,
    prefetch: Sequence[str],
    convert: Callable[[Any], Any],
) -> list[Any]:
    """``convert`` of what method ``name`` gives for each of ``items``.
    The method is looked up on the section (called with the item) or else on
    the model instance (called without arguments). Either way it gets model
    instances (``instances``: one query per batch on the fast path), with
    ``prefetch`` handed to ``prefetch_related_objects`` once per batch.
    """
    objects = instances(section, items)
    loaded = [obj for obj in objects if isinstance(obj, models.Model)]
    if prefetch and loaded:
        models.prefetch_related_objects(loaded, *prefetch)
    on_section = getattr(section, name, None)
    if on_section is not None:
        return [convert(on_section(obj)) if obj is not None else [] for obj in objects]
    return [convert(getattr(obj, name)()) if obj is not None else [] for obj in objects]


def item_rows(
    section: Section, items: Sequence[Any], paths: Sequence[str], **filters: Any
) -> list[list[Any]]:
    """Each of ``items``' rows of ``paths`` (a row: a list of their values).
    Instances holding the columns themselves (no path across a relation) are
    read without a query, one row each. Otherwise one query reads the batch's
    rows: a path across a reverse relation gives one row per related row, in
    a stable order, by the item's key and then by the key of each related row
    (``photos__file``: by photo), so an item's images or videos are listed in
    the same order on every database and every request.
    """
    if items and isinstance(items[0], models.Model) and not any("__" in p for p in paths):
        return [[[getattr(item, path, None) for path in paths]] for item in items]
    order = ["pk"]
    for path in paths:
        if "__" in path:
            related = f"{path.rsplit('__', 1)[0]}__pk"
            if related not in order:
                order.append(related)
    rows = (
        section.get_model()  # type: ignore[attr-defined]
        ._base_manager.filter(pk__in=[section.item_pk(i) for i in items])
        .filter(**filters)
        .order_by(*order)
        .values_list("pk", *paths)
    )
    return by_item(section, items, rows)


def by_item(section: Section, items: Sequence[Any], rows: Iterable[Any]) -> list[list[Any]]:
    """``rows`` of ``(key, *values)`` as each of ``items``' list of values."""
    found: dict[Any, list[Any]] = {}
    for key, *values in rows:
        found.setdefault(key, []).append(values)
    return [found.get(section.item_pk(item), []) for item in items]


def file_urls(field: Any) -> Callable[[Any], Any]:
    """A function from column values of ``field`` to media addresses: a
    FileField's stored names become their storage URL, other values are kept.

    For a FileField whose storage URL is a fixed prefix plus the file name
    (FileSystemStorage and most CDN setups; checked with two probe names),
    plain names are joined to the prefix without calling the storage, which
    for tens of thousands of files per page is most of the cost. Other names,
    and storages that sign or otherwise vary their URLs, go through
    ``storage.url()``.
    """
    if not isinstance(field, models.FileField):
        return lambda value: value
    storage = field.storage
    prefix: str | None = None
    probes = ("sitemapsplusprobe/probe-0_9.jpg", "a/b.c")
    try:
        first = storage.url(probes[0])
        if first.endswith(probes[0]):
            prefix = first[: -len(probes[0])]
            if storage.url(probes[1]) != prefix + probes[1]:
                prefix = None
    except Exception:  # A storage that cannot build a URL offline.
        prefix = None

    def convert(name: Any) -> Any:
        if not name:
            return None
        if not isinstance(name, str):  # an instance's FieldFile: media_url reads it
            return name
        if (
            prefix is not None
            and _PLAIN_NAME_RE.fullmatch(name)
            and "/." not in name
            and "//" not in name
        ):
            return prefix + name
        return storage.url(name)

    return convert
