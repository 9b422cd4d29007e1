"""The benchmarked sitemaps: ours (registered, autodiscovered) and contrib's.

Both list the published articles, ``BENCH_LIMIT`` (50,000) URLs per file,
in primary key order, with lastmod from ``updated_at``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.sitemaps import GenericSitemap, Sitemap

from bench.benchapp.models import Article
from django_sitemaps_plus import register
from django_sitemaps_plus.sections import ModelSection

LIMIT: int = settings.BENCH_LIMIT
#: Low enough that a file of LIMIT worst-case entries fits the byte limit, so
#: a section with it is sized by count (``measures_files()`` False); the
#: benchmark's locations are about 50 characters. The headline sections keep
#: the default, and their files are measured.
MAX_LOC_LENGTH = 200


def published() -> Any:
    return Article.objects.filter(is_published=True)


class ArticleSection(ModelSection):
    name = "articles"
    queryset = published()
    url_name = "article"
    url_kwargs = {"slug": "slug"}
    lastmod_fields = ["updated_at"]
    limit = LIMIT


class ArticleCommentsSection(ArticleSection):
    name = "articles-comments"
    lastmod_fields = ["updated_at", "comments__created_at"]


register(ArticleSection)
register(ArticleCommentsSection)


class ArticleAbsoluteSection(ModelSection):
    """The same rows located by ``Article.get_absolute_url()``: no ``url_name``.

    Default settings (``max_loc_length`` unset); not registered here:
    ``bench.bench_absolute_url`` registers it (and the next) for its run.
    """

    name = "articles-absolute"
    queryset = published()
    lastmod_fields = ["updated_at"]
    limit = LIMIT


class ArticleAbsoluteFullSection(ArticleAbsoluteSection):
    """As above with ``max_loc_length`` lowered, so files are sized by count
    rather than measured; both hold ``LIMIT`` URLs, as contrib's do."""

    name = "articles-absolute-full"
    max_loc_length = MAX_LOC_LENGTH


class ArticleSitemap(Sitemap):
    """contrib's usual sitemap: a queryset, ``get_absolute_url`` and a lastmod method."""

    limit = LIMIT

    def items(self) -> Any:
        return published().order_by("pk")

    def lastmod(self, obj: Article) -> Any:
        return obj.updated_at


CONTRIB_WITH_LASTMOD = {"articles": ArticleSitemap()}
CONTRIB_GENERIC = {
    "generic": GenericSitemap({"queryset": published().order_by("pk"), "date_field": "updated_at"})
}
CONTRIB_GENERIC["generic"].limit = LIMIT
CONTRIB_SITEMAPS = {**CONTRIB_WITH_LASTMOD, **CONTRIB_GENERIC}
