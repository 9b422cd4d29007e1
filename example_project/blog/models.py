"""A blog: articles with comments and tags.

``content_changed_at`` is what the sitemap reports as ``lastmod``: it moves
when the title or body changes, not on every save (``updated_at`` also moves
when, say, a view counter or a flag is written, which is no news to a crawler).
"""

from __future__ import annotations

from django.db import models
from django.urls import reverse
from django.utils import timezone

from django_sitemaps_plus.fields import ContentChangedField


class Tag(models.Model):
    name = models.CharField(max_length=50, unique=True)
    slug = models.SlugField(max_length=60, unique=True, allow_unicode=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Article(models.Model):
    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=220, unique=True, allow_unicode=True)
    body = models.TextField()
    is_published = models.BooleanField(default=False)
    published_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Stamped on create and whenever title or body change; other saves leave it.
    content_changed_at = ContentChangedField(tracked_fields=["title", "body"])
    tags = models.ManyToManyField(Tag, related_name="articles", blank=True)

    class Meta:
        ordering = ["-published_at", "pk"]
        indexes = [models.Index(fields=["is_published", "published_at"])]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("blog:article-detail", kwargs={"slug": self.slug})


class Comment(models.Model):
    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="comments")
    body = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        # The lastmod query takes MAX(created_at) per article.
        indexes = [models.Index(fields=["article", "created_at"])]

    def __str__(self) -> str:
        return f"Comment {self.pk} on {self.article_id}"
