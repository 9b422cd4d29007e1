"""Articles and their comments: lastmod from own and reverse-FK fields."""

from __future__ import annotations

from django.db import models
from django.urls import reverse


class Article(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    updated_at = models.DateTimeField()
    is_published = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.slug

    def get_absolute_url(self) -> str:
        return reverse("article", kwargs={"slug": self.slug})


class Comment(models.Model):
    # The composite index serves the foreign key and the per-article latest
    # comment (the correlated MAX of a page and the index's grouped MAX).
    article = models.ForeignKey(
        Article, on_delete=models.CASCADE, related_name="comments", db_index=False
    )
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["article", "created_at"], name="comment_article_created")]

    def __str__(self) -> str:
        return f"comment {self.pk} on {self.article_id}"
