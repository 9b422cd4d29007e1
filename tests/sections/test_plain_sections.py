"""A plain Section whose items() is a QuerySet pages in SQL, never loading it whole."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_sitemaps_plus import Section, register
from tests.testapp.models import Article
from tests.utils import articles, fetch, locs

pytestmark = pytest.mark.django_db


def _plain(registry, limit: int, with_lastmod: bool = False) -> None:
    class Listed(Section):
        name = "listed"

        def items(self):
            return Article.objects.filter(is_published=True).order_by("pk")

    class Dated(Listed):
        has_lastmod = True

        def lastmod(self, item):
            return item.updated_at

    register(Dated if with_lastmod else Listed, limit=limit)


def _selects(queries) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith("SELECT")]


def test_a_page_is_a_limit_offset_query(registry):
    _plain(registry, limit=10)
    articles(35)
    with CaptureQueriesContext(connection) as queries:
        response, body = fetch("/sitemap-listed-3.xml")
    assert response.status_code == 200
    assert locs(body) == [f"https://example.com/articles/article-{i}/" for i in range(20, 30)]
    selects = _selects(queries.captured_queries)
    assert selects and all("LIMIT" in sql.upper() for sql in selects), selects


def test_the_last_page_and_past_it(registry):
    _plain(registry, limit=10)
    articles(35)
    assert len(locs(fetch("/sitemap-listed-4.xml")[1])) == 5
    assert fetch("/sitemap-listed-5.xml")[0].status_code == 404


def test_the_index_counts_rows_when_there_is_no_lastmod(registry):
    _plain(registry, limit=10)
    articles(35)
    with CaptureQueriesContext(connection) as queries:
        response, body = fetch("/sitemap.xml")
    assert response.status_code == 200
    assert locs(body) == [f"https://example.com/sitemap-listed-{n}.xml" for n in (1, 2, 3, 4)]
    # The COUNT, and the sample: the first file's rows (a LIMIT).
    count, sample = _selects(queries.captured_queries)
    assert "COUNT(" in count.upper()
    assert "LIMIT" in sample.upper()


def test_the_index_reads_lastmod_per_page(registry):
    _plain(registry, limit=10, with_lastmod=True)
    rows = articles(25)
    newest = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc)
    page_two = [row.pk for row in rows[10:20]]
    Article.objects.filter(pk__in=page_two).update(updated_at=newest - dt.timedelta(days=1))
    Article.objects.filter(pk=rows[12].pk).update(updated_at=newest)
    Article.objects.filter(pk=rows[0].pk).update(updated_at=newest)
    _, body = fetch("/sitemap.xml")
    assert b"<lastmod>2026-03-04T05:06:07Z</lastmod>" in body
    # Page 1 has one dated row among undated ones, page 3 none: no lastmod
    # (a newest date would hide a new undated URL from conditional GETs).
    assert body.count(b"<lastmod>") == 1


def test_a_filtered_queryset_pages_what_it_keeps(registry):
    _plain(registry, limit=10)
    articles(30)
    Article.objects.filter(pk__lte=15).update(is_published=False)
    assert len(locs(fetch("/sitemap-listed-1.xml")[1])) == 10
    assert len(locs(fetch("/sitemap-listed-2.xml")[1])) == 5
    assert fetch("/sitemap-listed-3.xml")[0].status_code == 404


@pytest.mark.parametrize("ext", ["xml", "txt"])
@pytest.mark.parametrize("cache", [False, True])
def test_a_file_whose_every_row_is_refused_is_a_404(registry, settings, ext, cache, caplog):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": cache}

    class Refused(Section):
        name = "refused"

        def items(self):
            return ["https://elsewhere.example/a/", "relative/b"]

    register(Refused)
    response, _ = fetch(f"/sitemap-refused-1.{ext}")
    assert response.status_code == 404
    assert "elsewhere.example" in caplog.text
