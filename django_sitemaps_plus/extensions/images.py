"""Images: ``image:image`` / ``image:loc`` for each URL's images (docs/images.md).

From a field or a path across relations (``Images("photos__file")``) or a
method (``Images(method=..., prefetch=[...])``), at most one query per batch
of rows. Only ``image:loc`` is written: Google stopped using the other image
tags on 2022-08-06. An image is listed once per ``<url>``; past
``max_per_url`` (default 10, at most Google's 1,000) the rest of an item's
images are left out, with a warning naming the item. Never silently.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from django.core.checks import CheckMessage

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.extensions.base import (
    Extension,
    file_urls,
    item_rows,
    media_url,
    method_values,
    resolve_field,
    section_error,
    source_errors,
)
from django_sitemaps_plus.extensions.rules import images as rules

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")

_IMAGE_TAGS = "<image:image><image:loc></image:loc></image:image>"
#: Images per URL each entry is sized for unless told otherwise.
DEFAULT_MAX_PER_URL = 10


class Images(Extension):
    """``image:image`` children from a field, a relation or a method."""

    prefix: ClassVar[str] = "image"
    namespace: ClassVar[str] = protocol.IMAGE_NS

    def __init__(
        self,
        field: str | None = None,
        *,
        method: str | None = None,
        prefetch: Sequence[str] = (),
        max_per_url: int = DEFAULT_MAX_PER_URL,
    ) -> None:
        if (field is None) == (method is None):
            raise TypeError("Images() takes a field path or method=..., not both.")
        self.field = field
        self.method = method
        self.prefetch = list(prefetch)
        self.max_per_url = max_per_url

    def max_bytes(self, section: Section) -> int:
        return self.max_per_url * (len(_IMAGE_TAGS) + section.loc_budget())

    # Data -------------------------------------------------------------------------

    def fetch(self, section: Section, items: Sequence[Any]) -> Sequence[Any]:
        if self.method is not None:
            return method_values(section, items, self.method, self.prefetch, _non_empty)
        path = self.field or ""
        to_url = file_urls(resolve_field(section.get_model(), path))  # type: ignore[attr-defined]
        rows = item_rows(section, items, [path], **{f"{path}__isnull": False})
        return [_non_empty(to_url(value) for (value,) in each) for each in rows]

    # Output -----------------------------------------------------------------------

    def children(self, section: Section, item: Any, data: Any, site: SiteContext) -> str:
        if not data:
            return ""
        max_length = section.get_max_loc_length()
        parts: list[str] = []
        seen: set[str] = set()
        left_out = 0
        for value in data:
            url, why = media_url(value, site, max_length)
            if url is None:
                logger.warning(
                    "Sitemap section %r: an image of %r %s; left out.",
                    section.get_name(),
                    item,
                    why,
                )
                continue
            if url in seen:
                continue
            if len(seen) >= self.max_per_url:
                left_out += 1
                continue
            seen.add(url)
            parts.append(f"<image:image><image:loc>{xml.escape(url)}</image:loc></image:image>")
        if left_out:
            logger.warning(
                "Sitemap section %r: %r has %s more images than the %s per URL it is sized "
                "for (Images(max_per_url=...), at most %s); the first %s are listed, the "
                "rest left out.",
                section.get_name(),
                item,
                left_out,
                self.max_per_url,
                rules.MAX_IMAGES_PER_URL,
                self.max_per_url,
            )
        return "".join(parts)

    # System checks ----------------------------------------------------------------

    def check(self, section: Section) -> list[CheckMessage]:
        errors: list[CheckMessage] = []
        if not (
            isinstance(self.max_per_url, int) and 1 <= self.max_per_url <= rules.MAX_IMAGES_PER_URL
        ):
            message = (
                f"Images(max_per_url={self.max_per_url!r}) must be 1 to "
                f"{rules.MAX_IMAGES_PER_URL:,}."
            )
            hint = "Google reads at most 1,000 image:image per <url>."
            errors.append(section_error(section, message, "sitemaps_plus.E111", hint))
        if self.field is not None or self.method is not None:
            ids = ("sitemaps_plus.E113", "sitemaps_plus.E114")
            errors += source_errors(section, "Images", self.method, repr(self.field), ids)
        model = getattr(section, "model", None)
        if self.field is not None and model is not None:
            try:
                resolve_field(model, self.field)
            except LookupError as exc:
                errors.append(section_error(section, f"Images{exc}", "sitemaps_plus.E112"))
        return errors


def _non_empty(values: Iterable[Any] | None) -> list[Any]:
    if values is None:
        return []
    return [v for v in values if v not in (None, "") and not (hasattr(v, "name") and not v.name)]
