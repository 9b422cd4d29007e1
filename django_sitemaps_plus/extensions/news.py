"""Google News: ``News``, the ``news:news`` children of a ``NewsSection``'s
entries (the section, with its two-day window, is ``sections/news.py``;
docs/news.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from django.core.checks import CheckMessage

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.engine.lastmod import format_w3c
from django_sitemaps_plus.engine.pagination import WORST_BYTES_PER_CHARACTER
from django_sitemaps_plus.extensions.base import Extension, item_rows, section_error

if TYPE_CHECKING:
    from django_sitemaps_plus.sections.base import Section
    from django_sitemaps_plus.sections.news import NewsSection
    from django_sitemaps_plus.sites import SiteContext

_NEWS_TAGS = (
    "<news:news><news:publication><news:name></news:name><news:language></news:language>"
    "</news:publication><news:publication_date>2000-01-01T00:00:00Z</news:publication_date>"
    "<news:title></news:title></news:news>"
)


def news_language(language: str) -> str:
    """A Django language code as Google News wants it: ISO 639, or zh-cn / zh-tw."""
    code = language.lower().replace("_", "-")
    if code in ("zh-hans", "zh-cn", "zh-sg", "zh-my"):
        return "zh-cn"
    if code.startswith("zh-"):
        return "zh-tw"
    return code.split("-")[0]


class News(Extension):
    """``news:news`` for the entries of a ``NewsSection`` (added by it)."""

    prefix: ClassVar[str] = "news"
    namespace: ClassVar[str] = protocol.NEWS_NS

    def max_bytes(self, section: Section) -> int:
        section = cast("NewsSection", section)
        name = len(section.publication_name or "") * WORST_BYTES_PER_CHARACTER
        return len(_NEWS_TAGS) + name + 8 + section.max_title_length * WORST_BYTES_PER_CHARACTER

    def fetch(self, section: Section, items: Sequence[Any]) -> Sequence[Any]:
        section = cast("NewsSection", section)
        rows = item_rows(section, items, [section.title_field, section.date_field])
        return [each[0] if each else (None, None) for each in rows]

    def children(self, section: Section, item: Any, data: Any, site: SiteContext) -> str:
        section = cast("NewsSection", section)
        title, published = data
        if not title or published is None:
            section.drop_item(item, "has no news title or publication date")
            return ""
        if len(title) > section.max_title_length:
            limit = section.max_title_length
            section.drop_item(item, f"has a news title over {limit:,} characters")
            return ""
        return (
            "<news:news><news:publication>"
            f"<news:name>{xml.escape(section.publication_name or '')}</news:name>"
            f"<news:language>{section.get_publication_language()}</news:language>"
            "</news:publication>"
            f"<news:publication_date>{format_w3c(published)}</news:publication_date>"
            f"<news:title>{xml.escape(str(title))}</news:title>"
            "</news:news>"
        )

    def check(self, section: Section) -> list[CheckMessage]:
        # Asked by name: NewsSection (sections/news.py) imports this module.
        news_errors = getattr(section, "news_errors", None)
        if news_errors is None:
            message = (
                "News is added by NewsSection; subclass NewsSection instead of listing News "
                "in extensions."
            )
            return [section_error(section, message, "sitemaps_plus.E121")]
        return cast("list[CheckMessage]", news_errors())
