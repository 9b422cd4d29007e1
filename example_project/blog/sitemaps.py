"""Sitemap sections of the blog, found by the app's autodiscovery."""

from __future__ import annotations

from blog.models import Article
from django_sitemaps_plus import ModelSection, register


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
