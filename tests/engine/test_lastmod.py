from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.test import override_settings

from django_sitemaps_plus.engine.lastmod import (
    LastmodFieldError,
    file_lastmod,
    format_w3c,
    latest,
    latest_of_all,
    resolve_lastmod_path,
)
from django_sitemaps_plus.protocol import is_w3c_datetime
from tests.testapp.models import Article

UTC = dt.timezone.utc


@pytest.mark.parametrize(
    ("path", "many"),
    [
        ("updated_at", False),
        ("author__updated_at", False),
        ("comments__created_at", True),
        ("tags__updated_at", True),
    ],
)
def test_resolve_marks_many_valued_relations(path, many):
    assert resolve_lastmod_path(Article, path).many_valued is many


def test_resolve_refuses_non_date_fields():
    with pytest.raises(LastmodFieldError, match="CharField"):
        resolve_lastmod_path(Article, "title")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (dt.datetime(2024, 1, 2, 3, 4, 5, 678, tzinfo=UTC), "2024-01-02T03:04:05Z"),
        (
            dt.datetime(2024, 1, 2, 3, 4, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
            "2024-01-02T08:04:00Z",
        ),
        (dt.date(2024, 1, 2), "2024-01-02"),
        (None, None),
    ],
)
def test_format_w3c(value, text):
    assert format_w3c(value) == text
    if text:
        assert is_w3c_datetime(text)


@override_settings(TIME_ZONE="America/New_York")
def test_naive_datetimes_are_in_the_current_time_zone():
    assert format_w3c(dt.datetime(2024, 1, 2, 12, 0)) == "2024-01-02T17:00:00Z"


def test_latest_ignores_none_and_compares_dates_as_midnight_utc():
    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    assert latest([None, None]) is None
    assert latest([dt.date(2024, 1, 2), dt.datetime(2024, 1, 1, 23, tzinfo=UTC)]) == dt.date(
        2024, 1, 2
    )
    assert latest([dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 0, 30, tzinfo=berlin)]) == dt.date(
        2024, 1, 2
    )
    assert latest([dt.datetime(2024, 1, 2, 1, tzinfo=UTC), None]) == dt.datetime(
        2024, 1, 2, 1, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("2024", True),
        ("2024-01", True),
        ("2024-01-02", True),
        ("2024-01-02T03:04Z", True),
        ("2024-01-02T03:04:05+01:00", True),
        ("2024-01-02T03:04:05.123-08:00", True),
        ("2024-01-02T03:04:05", False),
        ("2024-13-01", False),
        ("02/01/2024", False),
        ("2024-01-02 03:04:05Z", False),
    ],
)
def test_w3c_datetime_forms(text, valid):
    assert is_w3c_datetime(text) is valid


# Fallbacks: an own field standing in where a lastmod field is empty ---------------


@pytest.fixture
def with_fallback(registry):
    from django_sitemaps_plus import register
    from tests.utils import articles, at

    register(
        Article,
        lastmod_fields=["updated_at"],
        lastmod_fallbacks={"updated_at": ["content_changed_at"]},
        limit=2,
    )
    articles(3)
    Article.objects.filter(pk=1).update(updated_at=at(3), content_changed_at=at(9))
    Article.objects.filter(pk=2).update(updated_at=None, content_changed_at=at(5))
    Article.objects.filter(pk=3).update(updated_at=None, content_changed_at=None)


@pytest.mark.django_db
def test_a_fallback_stands_in_where_the_field_is_empty(with_fallback):
    from django_sitemaps_plus.registry import site as sections
    from tests.utils import at, fetch, url_entries

    listed = url_entries(fetch("/sitemap-articles-1.xml")[1])
    # The field wins where it has a value; the fallback where it has none.
    assert [entry["lastmod"] for entry in listed.values()] == [
        "2024-01-03T12:00:00Z",
        "2024-01-05T12:00:00Z",
    ]
    assert [
        entry["lastmod"] for entry in url_entries(fetch("/sitemap-articles-2.xml")[1]).values()
    ] == [None]
    # The row expression (read in Python where SQL does not format it) agrees.
    spec = sections.get("articles").lastmod_spec
    rows = Article.objects.order_by("pk").annotate(_m=spec.row_expression())
    assert [row._m for row in rows] == [at(3), at(5), None]


@pytest.mark.django_db
def test_fallbacks_date_the_files_and_are_counted(with_fallback):
    from lxml import etree

    from django_sitemaps_plus.registry import site as sections
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import site_context
    from tests.utils import NS, fetch

    index = etree.fromstring(fetch("/sitemap.xml")[1])
    lastmods = [e.findtext("sm:lastmod", None, NS) for e in index.iterfind("sm:sitemap", NS)]
    # File 1: the fallback's 5 January beats the field's 3 January; file 2: none.
    assert lastmods == ["2024-01-05T12:00:00Z", None]
    section = sections.get("articles")
    counts = section.lastmod_counts(site_context())
    assert counts == Section.lastmod_counts(section, site_context())
    assert counts.undated == 1 and sum(counts.by_day.values()) == 2


@pytest.mark.parametrize(
    ("fallbacks", "message"),
    [
        ({"updated_at": ["published_on"]}, "is not an own datetime field"),
        ({"updated_at": ["author__updated_at"]}, "is not an own datetime field"),
        ({"updated_at": ["nothing"]}, "has no field 'nothing'"),
        ({"author__updated_at": ["updated_at"]}, "only an own field has fallbacks"),
    ],
)
def test_a_fallback_must_be_an_own_field_of_the_same_kind(fallbacks, message):
    from django_sitemaps_plus.engine.lastmod import LastmodSpec

    with pytest.raises(LastmodFieldError, match=message):
        LastmodSpec(Article, list(fallbacks), fallbacks)


def test_a_file_with_an_undated_url_has_no_lastmod():
    newest = dt.datetime(2024, 5, 6, tzinfo=dt.timezone.utc)
    assert file_lastmod(newest, undated=False) == newest
    assert file_lastmod(newest, undated=True) is None
    assert latest_of_all([newest, dt.date(2024, 1, 1)]) == newest
    assert latest_of_all([newest, None]) is None
