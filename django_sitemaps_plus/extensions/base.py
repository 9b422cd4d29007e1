"""The plug-in point for extension elements (images, news, video, hreflang)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from django_sitemaps_plus.location import SiteContext
    from django_sitemaps_plus.sections import Section


class Extension:
    """Extension children for the ``<url>`` entries of a section.

    A section lists its extensions in ``extensions``. The writer declares
    ``prefix``/``namespace`` on the root of the section's files and calls,
    for each batch of items of a page, ``fetch`` once (one query per batch,
    never one per URL), then ``children`` per item.
    """

    prefix: ClassVar[str]
    namespace: ClassVar[str]

    def max_bytes(self, section: Section) -> int:
        """Upper bound of this extension's bytes inside one ``<url>``.

        It sizes the section's files so a full file stays under 52,428,800
        bytes; children over it make the entry too big, and it is dropped
        with a logged warning.
        """
        return 0

    def fetch(self, section: Section, items: Sequence[Any]) -> Sequence[Any]:
        """Data for each of ``items`` (aligned with it), in as few queries as possible.

        For a ``ModelSection`` the items are primary keys on the fast path
        (``url_name``) and instances otherwise; ``section.item_pk(item)`` gives
        the key either way.
        """
        return [None] * len(items)

    def children(self, section: Section, item: Any, data: Any, site: SiteContext) -> str:
        """The XML of this extension's children for one ``<url>`` (escaped)."""
        return ""

    def check(self, section: Section) -> list[CheckMessage]:
        """System check messages for ``section``'s use of this extension."""
        return []
