"""ContentChangedField: stamps real content changes only."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from django_sitemaps_plus.fields import ContentChangedField
from tests.testapp.models import Article

pytestmark = pytest.mark.django_db


def stamp(article: Article) -> dt.datetime | None:
    return Article.objects.values_list("content_changed_at", flat=True).get(pk=article.pk)


def test_set_on_create():
    article = Article.objects.create(title="t", slug="s")
    assert stamp(article) is not None


def test_tracked_change_restamps_untracked_change_does_not():
    article = Article.objects.create(title="t", slug="s")
    first = stamp(article)
    loaded = Article.objects.get(pk=article.pk)
    loaded.views = 10
    loaded.save()
    assert stamp(article) == first
    loaded.title = "new title"
    loaded.save()
    second = stamp(article)
    assert second is not None and first is not None and second > first
    # Saving again without a change keeps the new baseline.
    loaded.save()
    assert stamp(article) == second


def test_save_of_unchanged_values_assigned_again():
    article = Article.objects.create(title="t", slug="s", body="b")
    first = stamp(article)
    loaded = Article.objects.get(pk=article.pk)
    loaded.title = "t"
    loaded.body = "b"
    loaded.save()
    assert stamp(article) == first


def test_update_fields_without_tracked_fields_does_not_stamp():
    article = Article.objects.create(title="t", slug="s")
    first = stamp(article)
    article.views = 3
    article.save(update_fields=["views"])
    assert stamp(article) == first


def test_deferred_tracked_field_is_not_a_change():
    article = Article.objects.create(title="t", slug="s")
    first = stamp(article)
    loaded = Article.objects.only("pk", "views", "content_changed_at").get(pk=article.pk)
    loaded.views = 4
    loaded.save()
    assert stamp(article) == first


def test_deconstruct_round_trip():
    field = ContentChangedField(tracked_fields=["title", "body"])
    field.set_attributes_from_name("changed")
    _name, path, args, kwargs = field.deconstruct()
    assert path == "django_sitemaps_plus.fields.ContentChangedField"
    assert kwargs == {"tracked_fields": ["title", "body"]}
    clone = ContentChangedField(*args, **kwargs)
    assert clone.null and not clone.editable and clone.db_index
    strict = ContentChangedField(tracked_fields=["title"], null=False)
    assert strict.deconstruct()[3]["null"] is False


def test_now_is_used(monkeypatch):
    fixed = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
    monkeypatch.setattr(timezone, "now", lambda: fixed)
    article = Article.objects.create(title="t", slug="s")
    assert stamp(article) == fixed


class TestInheritance:
    """Proxy models and multi-table children share the parent's field object."""

    def test_proxy_untracked_save_keeps_the_stamp(self):
        from tests.testapp.models import ArticleProxy

        article = ArticleProxy.objects.create(title="t", slug="s")
        first = stamp(article)
        assert first is not None
        loaded = ArticleProxy.objects.get(pk=article.pk)
        loaded.views = 3
        loaded.save()
        assert stamp(article) == first
        loaded.title = "changed"
        loaded.save()
        changed = stamp(article)
        assert changed is not None and changed > first

    def test_multi_table_child_parent_field(self):
        from tests.testapp.models import FeatureArticle

        feature = FeatureArticle.objects.create(title="t", slug="s", subtitle="x")
        first = stamp(feature)
        assert first is not None
        loaded = FeatureArticle.objects.get(pk=feature.pk)
        loaded.views = 3
        loaded.save()
        assert stamp(feature) == first
        loaded.body = "a tracked field of the parent"
        loaded.save()
        changed = stamp(feature)
        assert changed is not None and changed > first

    def test_multi_table_child_own_field_tracks_parent_and_child_fields(self):
        from tests.testapp.models import FeatureArticle

        def feature_stamp(pk: int) -> dt.datetime | None:
            return FeatureArticle.objects.values_list("feature_changed_at", flat=True).get(pk=pk)

        feature = FeatureArticle.objects.create(title="t", slug="s", subtitle="x")
        first = feature_stamp(feature.pk)
        assert first is not None
        loaded = FeatureArticle.objects.get(pk=feature.pk)
        loaded.body = "tracked by the parent's field only"
        loaded.save()
        assert feature_stamp(feature.pk) == first
        loaded.subtitle = "y"
        loaded.save()
        second = feature_stamp(feature.pk)
        assert second is not None and second > first
        loaded.title = "a parent field the child's field tracks"
        loaded.save()
        third = feature_stamp(feature.pk)
        assert third is not None and third > second

    def test_loading_the_parent_row_of_a_child(self):
        from tests.testapp.models import FeatureArticle

        feature = FeatureArticle.objects.create(title="t", slug="s")
        first = stamp(feature)
        parent = Article.objects.get(pk=feature.pk)
        parent.views = 9
        parent.save()
        assert stamp(feature) == first
