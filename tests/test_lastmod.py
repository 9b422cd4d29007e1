from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.test import override_settings

from django_sitemaps_plus.lastmod import (
    LastmodFieldError,
    format_w3c,
    latest,
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
