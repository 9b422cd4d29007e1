"""Sitemap sections of the blog, found by the app's autodiscovery."""

from __future__ import annotations

from blog.models import Article
from django_sitemaps_plus import ModelSection, register
from django_sitemaps_plus.sections import NewsSection


@register(Article)
class ArticleSection(ModelSection):
    queryset = Article.objects.filter(is_published=True)
    # lastmod is the latest of the article's own content change and its newest
    # comment, computed in SQL; updated_at is left out on purpose (it also
    # moves on saves that change nothing a reader sees).
    lastmod_fields = ["content_changed_at", "comments__created_at"]
    # Fast path: locations are built from the slug column without loading
    # model instances or calling get_absolute_url().
    url_name = "blog:article-detail"
    url_kwargs = {"slug": "slug"}


@register
class ArticleNewsSection(NewsSection):
    """Google News: the articles published in the last two days, newest first.

    Its own file in the index (``sitemap-news-1.xml``); articles leave it two
    days after publication with no save, which ``expires_at()`` tells the cache.
    """

    model = Article
    queryset = Article.objects.filter(is_published=True)
    name = "news"
    publication_name = "The Example Blog"
    date_field = "published_at"
    title_field = "title"
    lastmod_fields = ["content_changed_at"]
    url_name = "blog:article-detail"
    url_kwargs = {"slug": "slug"}
    # Listed while no article is recent enough: the blog's front page.
    landing_location = "blog:article-list"
