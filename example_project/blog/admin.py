from __future__ import annotations

from django.contrib import admin

from blog.models import Article, Comment, Tag


class CommentInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Comment
    extra = 0


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["title", "is_published", "published_at", "content_changed_at"]
    list_filter = ["is_published"]
    search_fields = ["title", "slug"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["tags"]
    inlines = [CommentInline]
    # The changelist must stay usable with a million seeded rows.
    show_full_result_count = False


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
