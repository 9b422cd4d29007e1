from __future__ import annotations

import uuid

from django.db import models
from django.urls import reverse

from django_sitemaps_plus.fields import ContentChangedField


class Author(models.Model):
    name = models.CharField(max_length=100)
    updated_at = models.DateTimeField(null=True, blank=True)


class Tag(models.Model):
    name = models.CharField(max_length=50)
    updated_at = models.DateTimeField(null=True, blank=True)


class Article(models.Model):
    title = models.CharField(max_length=200)
    # Long enough for the 2,048-character worst case; no index (MySQL key limit).
    slug = models.SlugField(max_length=2048, allow_unicode=True, db_index=False)
    body = models.TextField(blank=True)
    is_published = models.BooleanField(default=True)
    views = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(null=True, blank=True)
    published_on = models.DateField(null=True, blank=True)
    content_changed_at = ContentChangedField(tracked_fields=["title", "body"])
    author = models.ForeignKey(Author, null=True, blank=True, on_delete=models.SET_NULL)
    tags = models.ManyToManyField(Tag, blank=True, related_name="articles")

    def get_absolute_url(self) -> str:
        return reverse("article", kwargs={"slug": self.slug})


class ArticleProxy(Article):
    """A proxy: its saves must stamp ``content_changed_at`` as Article's do."""

    class Meta:
        proxy = True


class FeatureArticle(Article):
    """A multi-table child: the parent's field, plus one of its own."""

    subtitle = models.CharField(max_length=200, blank=True)
    feature_changed_at = ContentChangedField(tracked_fields=["subtitle", "title"])


class Comment(models.Model):
    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="comments")
    created_at = models.DateTimeField()


class Event(models.Model):
    """Only a date: lastmod is written as YYYY-MM-DD."""

    name = models.CharField(max_length=100)
    day = models.DateField(null=True)

    def get_absolute_url(self) -> str:
        return f"/events/{self.pk}/"


class NoUrl(models.Model):
    name = models.CharField(max_length=100)


class UuidThing(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4)

    def get_absolute_url(self) -> str:
        return f"/things/{self.id}/"
