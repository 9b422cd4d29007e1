"""File sizes: 50,000 URLs and 52,428,800 bytes are never exceeded."""

from __future__ import annotations

import logging

import pytest
from django.db import connection
from django.test import Client

from django_sitemaps_plus import ModelSection, Section, protocol, register
from tests.testapp.models import Article
from tests.utils import assert_schema_valid, fetch, locs

pytestmark = pytest.mark.django_db


def bulk_articles(count: int, slug_length: int = 8) -> None:
    """Insert ``count`` published articles with primary keys 1..count.

    One ``executemany`` rather than ``bulk_create``, whose per-object work and
    SQLite's 999-parameter batches make 50,000 rows take ten seconds.
    """
    quote = connection.ops.quote_name
    columns = ["id", "title", "slug", "body", "is_published", "views"]
    sql = "INSERT INTO {} ({}) VALUES ({})".format(
        quote(Article._meta.db_table),
        ", ".join(quote(c) for c in columns),
        ", ".join(["%s"] * len(columns)),
    )
    rows = [(i, "t", f"{i:0{slug_length}d}", "", True, 0) for i in range(1, count + 1)]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


class ShortUrlSection(ModelSection):
    """Locations of at most 100 characters: 50,000 fit in one file."""

    name = "short"
    max_loc_length = 100
    url_name = "article"
    url_kwargs = {"slug": "slug"}


def test_a_section_of_short_urls_holds_the_protocol_maximum_per_file():
    section = ShortUrlSection(Article)
    assert section.urls_per_file() == protocol.MAX_URLS_PER_FILE


@pytest.mark.slow
@pytest.mark.parametrize(("rows", "files"), [(50_000, 1), (50_001, 2)])
def test_exactly_50000_and_50001_urls(registry, rows, files):
    register(Article)(ShortUrlSection)
    bulk_articles(rows)
    _, index = fetch("/sitemap.xml")
    assert len(locs(index)) == files
    _, first = fetch(locs(index)[0].removeprefix("https://example.com"))
    assert first.count(b"<url>") == 50_000
    assert_schema_valid(first)
    if files == 2:
        _, second = fetch(locs(index)[1].removeprefix("https://example.com"))
        assert locs(second) == ["https://example.com/articles/00050001/"]


@pytest.mark.parametrize("limit", [None, 10_000, 1])
@pytest.mark.parametrize("max_loc_length", [None, 1_024, 100])
def test_a_full_file_of_the_longest_entries_stays_within_the_byte_limit(
    registry, monkeypatch, limit, max_loc_length
):
    """Whatever the locations (every one at the maximum length, from none to a
    quarter of their characters escaped as '&amp;'), a full file stays within
    the byte limit and the URL limit. Rendered, not computed: the byte limit
    is lowered to 300 kB so a full file is small enough to render here."""
    cap = 300_000
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", cap)
    length = max_loc_length or protocol.MAX_LOC_LENGTH
    path_length = length - len("https://example.com")

    def location(number: int) -> str:
        ampersands = number % (path_length // 4 + 1)
        head = f"/{number}/?"
        rest = path_length - len(head)
        return head + "&" * ampersands + "a" * (rest - ampersands)

    class Longest(Section):
        name = "longest"

        def items(self):
            return [location(n) for n in range(2 * self.urls_per_file() + 2)]

    register(Longest(limit=limit, max_loc_length=max_loc_length))
    _, body = fetch("/sitemap-longest-1.xml")
    listed = locs(body)
    assert listed
    assert len(body) <= cap
    assert len(listed) <= (limit or protocol.MAX_URLS_PER_FILE)
    assert all(len(url) == length for url in listed)


@pytest.mark.slow
def test_worst_case_file_of_2048_character_urls_stays_under_52428800_bytes(registry):
    """The default budget assumes 2,048-character URLs: fill a file with them."""
    prefix_length = len("https://example.com/articles/") + 1  # trailing slash
    slug_length = protocol.MAX_LOC_LENGTH - prefix_length
    section = register(Article, url_name="article", url_kwargs={"slug": "slug"})
    per_file = ModelSection(Article).urls_per_file()
    assert per_file < protocol.MAX_URLS_PER_FILE
    bulk_articles(per_file + 1, slug_length=slug_length)
    del section
    _response, body = fetch("/sitemap-articles-1.xml")
    assert body.count(b"<url>") == per_file
    assert len(body) <= protocol.MAX_FILE_BYTES
    assert all(len(loc) == protocol.MAX_LOC_LENGTH for loc in locs(body)[:3])
    _, second = fetch("/sitemap-articles-2.xml")
    assert second.count(b"<url>") == 1


def test_an_entry_over_its_byte_budget_is_dropped_and_logged(registry, caplog):
    class Ampersands(Section):
        name = "amp"
        max_loc_length = 400

        def items(self):
            # 392 characters whose escaping ('&' -> '&amp;') passes the budget.
            return ["/ok/", "/q?" + "&" * 370]

    register(Ampersands)
    with caplog.at_level(logging.WARNING, logger="django_sitemaps_plus"):
        _, body = fetch("/sitemap-amp-1.xml")
    assert locs(body) == ["https://example.com/ok/"]
    assert "over the per-URL budget" in caplog.text


def test_pages_are_primary_key_ranges_stable_under_inserts_and_deletes(registry):
    register(Article, limit=10)
    bulk_articles(25)
    _, before = fetch("/sitemap-articles-2.xml")
    Article.objects.filter(pk=5).delete()
    Article.objects.create(pk=26, title="new", slug="new")
    _, after = fetch("/sitemap-articles-2.xml")
    # Deleting from page 1 and appending to page 3 leaves page 2 unchanged.
    assert before == after
    assert len(locs(fetch("/sitemap-articles-1.xml")[1])) == 9
    assert len(locs(fetch("/sitemap-articles-3.xml")[1])) == 6


def test_sparse_keys_skip_empty_ranges_in_the_index(registry):
    register(Article, limit=10)
    Article.objects.create(pk=3, title="a", slug="a")
    Article.objects.create(pk=95, title="b", slug="b")
    _, index = fetch("/sitemap.xml")
    assert locs(index) == [
        "https://example.com/sitemap-articles-1.xml",
        "https://example.com/sitemap-articles-10.xml",
    ]
    assert Client().get("/sitemap-articles-5.xml").status_code == 404


def test_page_cost_does_not_depend_on_page_number(registry, django_assert_num_queries):
    register(Article, limit=10)
    bulk_articles(100)
    with django_assert_num_queries(2) as captured:
        fetch("/sitemap-articles-10.xml")
    rows_query = captured.captured_queries[-1]["sql"]
    assert "OFFSET" not in rows_query.upper()
    assert "90" in rows_query and "100" in rows_query
