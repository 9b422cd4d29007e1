"""The page hot path's batch shortcuts give exactly what the per-row path gives.

``LocationTemplate.paths`` (one regex call per column of a batch),
``render.entries`` for a plain section (one f-string per entry, checks per batch),
``fetch_chunks`` (compiled SQL on a plain cursor) and ``xml._batched``
(islice + join) are speed-ups only: these tests pin them to the slow path.
"""

from __future__ import annotations

import datetime as dt
import logging

import pytest
from django.urls import reverse
from django.utils.encoding import iri_to_uri
from hypothesis import given
from hypothesis import strategies as st

from django_sitemaps_plus import ModelSection, Section
from django_sitemaps_plus.engine import render, xml
from django_sitemaps_plus.engine.location import LocationTemplate, absolute_location, absolute_paths
from django_sitemaps_plus.engine.reads import fetch_chunks
from django_sitemaps_plus.sites import SiteContext
from tests.testapp.models import Article

SITE = SiteContext("https://example.com")


@pytest.mark.parametrize(
    ("url_name", "kwargs", "rows"),
    [
        ("article", {"slug": "slug"}, [(1, "a"), (2, "b-c_9"), (3, "Z")]),
        ("numbered", {"number": "n"}, [(1, 42), (2, 7)]),
        ("two-kwargs", {"first": "a", "second": "b"}, [(1, "x-y", 7), (2, "q", 1)]),
    ],
)
def test_paths_equal_path_per_row(url_name, kwargs, rows):
    template = LocationTemplate(url_name, kwargs)
    width = len(kwargs)
    expected = [
        "https://example.com" + iri_to_uri(reverse(url_name, kwargs=dict(zip(kwargs, r[1:]))))
        for r in rows
    ]
    assert template.paths(rows, 1, "https://example.com") == expected
    assert ["https://example.com" + template.path(r[1 : 1 + width]) for r in rows] == expected


@pytest.mark.parametrize(
    "odd", ["über", "a&b", "two\nlines", "", "a b"], ids=["iri", "amp", "newline", "empty", "space"]
)
def test_paths_leave_a_batch_with_an_odd_value_to_path(odd):
    template = LocationTemplate("article", {"slug": "slug"})
    assert template.paths([(1, "fine"), (2, odd)], 1) is None
    assert template.paths([], 1) is None


def _plain_rows():
    long_url = "https://example.com/" + "x" * 300
    return [
        (1, "https://example.com/a/", "2024-01-02T03:04:05Z", None),
        (2, None, "2024-01-02", None),
        (3, "https://example.com/a?b=1&c=2", None, None),
        (4, "https://example.com/%C3%BC/", "2024-01-02", None),
        (5, long_url, "2024-01-02", None),
        (6, "https://example.com/b/", "", None),
    ]


def _slow_render(section, rows):
    entries = []
    for item, url, lastmod, _ in rows:
        entry = section._entry(
            item,
            url,
            lastmod,
            "",
            changefreq=section.get_changefreq(item),
            priority=section.get_priority(item),
        )
        if entry is not None:
            entries.append(entry)
    return entries


@pytest.mark.parametrize(
    ("changefreq", "priority"), [(None, None), ("daily", 0.5), (None, "0.8"), ("weekly", None)]
)
@pytest.mark.parametrize("max_loc_length", [100, 2_048])
def test_render_plain_equals_entry_per_row(changefreq, priority, max_loc_length, caplog):
    section = Section(changefreq=changefreq, priority=priority, max_loc_length=max_loc_length)
    assert render.renders_plain(section)
    rows = _plain_rows()
    with caplog.at_level(logging.WARNING, logger="django_sitemaps_plus"):
        slow = _slow_render(section, rows)
        slow_log = [r.getMessage() for r in caplog.records]
        caplog.clear()
        fast = list(render.entries(section, rows, SITE))
        fast_log = [r.getMessage() for r in caplog.records]
    assert fast == slow
    assert fast_log == slow_log
    assert ("longer than 100" in " ".join(fast_log)) == (max_loc_length == 100)


def test_render_plain_batch_shortcut_equals_entry_per_row():
    section = Section(changefreq="daily")
    rows = [(i, f"https://example.com/p/{i}/", "2024-01-02T03:04:05Z", None) for i in range(50)]
    assert list(render.entries(section, rows, SITE)) == _slow_render(section, rows)


@pytest.mark.parametrize(
    "lastmod", [lambda i: None, lambda i: "", lambda i: "2024-01-02" if i % 2 else None]
)
def test_render_plain_batch_without_or_with_some_lastmods_equals_entry_per_row(lastmod):
    section = Section(priority=0.4)
    rows = [(i, f"https://example.com/p/{i}/", lastmod(i), None) for i in range(50)]
    assert list(render.entries(section, rows, SITE)) == _slow_render(section, rows)


def test_a_section_with_per_item_priority_is_not_plain():
    class Prioritised(Section):
        varies_per_item = True

        def get_priority(self, item):
            return 0.3

    assert not render.renders_plain(Prioritised())


@pytest.mark.parametrize("count", [0, 1, 999, 1000, 1001, 2500])
def test_batched_stream_is_the_joined_document(count):
    entries = [f"<url><loc>https://example.com/{i}</loc></url>\n" for i in range(count)]
    chunks = list(xml.stream_urlset(iter(entries), {}))
    assert (
        b"".join(chunks)
        == (xml.root_open("urlset", {}) + "".join(entries) + "</urlset>\n").encode()
    )
    # The head leaves at once with a few entries (the first byte of a stream
    # does not wait for a whole batch); later chunks are at most a batch each.
    assert chunks[0].startswith(xml.root_open("urlset", {}).encode())
    assert chunks[0].count(b"<url>") == min(count, xml.FIRST_BATCH_SIZE)
    assert all(chunk.count(b"<url>") <= xml.BATCH_SIZE for chunk in chunks)
    assert len(chunks) <= 2 + -(-count // xml.BATCH_SIZE)


@pytest.mark.django_db(transaction=True)
def test_postgresql_streams_the_rows_from_a_cursor_without_hold():
    """Outside a transaction Django declares server-side cursors WITH HOLD,
    which PostgreSQL materialises whole before the first row; the rows of a
    page are read in a transaction instead, so they stream."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "postgresql":
        pytest.skip("server-side cursors are PostgreSQL's")
    Article.objects.bulk_create(Article(title="t", slug=f"s{i}") for i in range(300))
    queryset = Article.objects.order_by("pk").values_list("pk", "slug")
    assert connection.get_autocommit()
    with CaptureQueriesContext(connection) as queries:
        chunks = fetch_chunks(queryset)
        first = next(chunks)
        assert not connection.get_autocommit()  # in the stream's transaction
        rest = [row for chunk in chunks for row in chunk]
    assert [*first, *rest] == list(queryset)
    declares = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("DECLARE")]
    assert declares and not any("WITH HOLD" in sql for sql in declares)
    assert connection.get_autocommit()  # the transaction ended with the stream


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("url_name", ["article", None])
def test_postgresql_streams_a_file_without_a_held_cursor(registry, url_name):
    """Both ways of locating rows (a URL pattern, get_absolute_url())."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from django_sitemaps_plus import register
    from tests.utils import fetch

    if connection.vendor != "postgresql":
        pytest.skip("server-side cursors are PostgreSQL's")
    options = {"url_name": url_name, "url_kwargs": {"slug": "slug"}} if url_name else {}
    register(Article, lastmod_fields=["updated_at"], **options)
    Article.objects.bulk_create(Article(title="t", slug=f"s{i}") for i in range(300))
    with CaptureQueriesContext(connection) as queries:
        _, body = fetch("/sitemap-articles-1.xml")
    assert body.count(b"<url>") == 300
    declares = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("DECLARE")]
    assert declares and not any("WITH HOLD" in sql for sql in declares)
    assert connection.get_autocommit()


@pytest.mark.django_db
def test_fetch_chunks_equals_values_list():
    Article.objects.bulk_create(
        Article(
            title="t",
            slug=f"s{i}",
            updated_at=dt.datetime(2024, 1, 1, i % 24, tzinfo=dt.timezone.utc),
        )
        for i in range(4_500)
    )
    queryset = Article.objects.order_by("pk").values_list("pk", "slug", "updated_at")
    chunks = list(fetch_chunks(queryset))
    # A small first batch (the first byte of a stream waits for it), then full ones.
    assert [len(c) for c in chunks] == [100, 2_000, 2_000, 400]
    assert [row for chunk in chunks for row in chunk] == list(queryset)
    assert list(fetch_chunks(Article.objects.none().values_list("pk"))) == []


@pytest.mark.django_db
def test_model_section_page_equals_its_slow_path(registry):
    Article.objects.bulk_create(
        Article(title="t", slug=slug, updated_at=dt.datetime(2024, 5, 6, tzinfo=dt.timezone.utc))
        for slug in ["plain", "über", "x" * 120, "also-plain"]
    )
    fast = ModelSection(
        Article, url_name="article", url_kwargs={"slug": "slug"}, max_loc_length=100,
        lastmod_fields=["updated_at"],
    )  # fmt: skip
    slow = ModelSection(Article, max_loc_length=100, lastmod_fields=["updated_at"])
    assert list(fast.page_entries(1, SITE)) == list(slow.page_entries(1, SITE))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fields", [["updated_at"], ["updated_at", "comments__created_at", "tags__updated_at"]]
)
def test_index_in_one_query_equals_index_in_batches_of_one_block(fields):
    from tests.testapp.models import Comment, Tag

    tag = Tag.objects.create(name="t", updated_at=dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc))
    for i in range(1, 24):
        article = Article.objects.create(
            pk=i,
            title="t",
            slug=f"s{i}",
            updated_at=dt.datetime(2024, 1, 1, i, tzinfo=dt.timezone.utc),
            is_published=i % 5 != 0,
        )
        if i % 3 == 0:
            Comment.objects.create(
                article=article, created_at=dt.datetime(2024, 6, i, tzinfo=dt.timezone.utc)
            )
        if i == 7:
            article.tags.add(tag)
    Article.objects.filter(pk__in=[11, 12, 13, 14, 15]).delete()  # an empty range

    class ByRanges(ModelSection):
        queryset = Article.objects.filter(is_published=True)
        lastmod_fields = fields
        limit = 5

    class OneBlockAQuery(ByRanges):
        RANGE_UNION_PAGES = 1

    ranges = ByRanges().index_pages(SITE)
    assert ranges == OneBlockAQuery().index_pages(SITE)
    # Packed: the empty range makes no file, and no gap in the numbers.
    assert [p.number for p in ranges] == [1, 2, 3]
    for page in ranges:
        assert ByRanges().page_info(page.number, SITE) == page
    assert ByRanges().page_info(4, SITE) is None


# get_absolute_url(): locations checked per batch -------------------------------

_LOCATION_PIECES = st.sampled_from(
    ["/", "//", "a", "Z9", "-._~", "?q=1", "&", "'", "=:;$()+,!*@", "%2F", "%", "%zz", "#",
     "[", "]", "ü", " ", "\n", "\t", "<", '"', "https://example.com/", "http://example.com/",
     "https://other.example/", "x" * 700]
)  # fmt: skip
_PLAIN_PIECES = st.sampled_from(["/", "a", "Z9", "-._~", "?q=1", "&", "'", "=:;$()+,!*@", "%2F"])
_LOCATION = st.one_of(
    st.lists(_PLAIN_PIECES, max_size=6).map(lambda pieces: "/" + "".join(pieces)),
    st.lists(_LOCATION_PIECES, max_size=6).map("".join),
)
#: Mostly plain paths (the batch check answers), some batches with odd ones.
_LOCATIONS = st.one_of(
    st.lists(st.lists(_PLAIN_PIECES, max_size=6).map(lambda p: "/" + "".join(p)), max_size=8),
    st.lists(_LOCATION, max_size=8),
)
_SITES = [
    SiteContext("https://example.com"),
    SiteContext("http://[::1]:8000"),
    SiteContext("https://example.com/base"),
    SiteContext("https://" + "h" * 1500 + ".example"),
]


@given(locations=_LOCATIONS, site=st.sampled_from(_SITES))
def test_absolute_paths_give_what_absolute_location_gives(locations, site):
    """The batch check is a shortcut only: when it answers, every location is
    listable and made absolute exactly as ``absolute_location`` makes it."""
    urls = absolute_paths(locations, site)
    if urls is not None:
        assert urls == [absolute_location(location, site)[0] for location in locations]


@pytest.mark.parametrize("site", _SITES[:3])
def test_absolute_paths_take_what_get_absolute_url_usually_gives(site):
    locations = ["/articles/a-b_c/", "/a/1/?page=2&sort=x", "/%C3%BC/", "/~user/(x)"]
    assert absolute_paths(locations, site) == [site.base_url + loc for loc in locations]
    room = 2048 - len(site.base_url)
    longest = ["/" + "x" * (room - 1)]
    assert absolute_paths(longest, site) == [site.base_url + longest[0]]
    assert absolute_paths(["/" + "x" * room], site) is None  # one too long: checked each


def test_absolute_paths_memory_is_flat_in_the_batch_size():
    """One character class over the joined batch: no backtracking state per
    character (a nested-group regex took about 3 KB per location)."""
    import tracemalloc

    locations = [f"/articles/{i:090d}/" for i in range(2_000)]
    tracemalloc.start()
    try:
        urls = absolute_paths(locations, SITE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert urls is not None and urls[7] == f"https://example.com/articles/{7:090d}/"
    joined = sum(map(len, locations))
    urls_size = sum(len(url) + 49 for url in urls) + 8 * len(urls)
    assert peak < 2 * joined + urls_size + 100_000


@pytest.mark.parametrize(
    "odd",
    ["", "a/b", "//cdn.example.com/a", "https://example.com/a", "/ü/", "/a b", "/100%",
     "/a#b#c", "/[x]", "/two\n/lines", None, 7],
)  # fmt: skip
def test_absolute_paths_leave_a_batch_with_an_odd_location_to_the_full_check(odd):
    assert absolute_paths(["/plain/", odd], SITE) is None


def test_location_urls_equal_location_url_per_item(caplog):
    """``Section.location_urls`` (a batch) gives, and logs, what
    it gives item by item (batches of one), including a location that does not
    reverse and a batch the cheap check cannot prove."""

    class Mixed(Section):
        def location(self, item):
            return reverse(item) if item == "missing" else item

    section = Mixed()
    batches = [
        ["/a/", "/b/?x=1&y=2"],
        ["/a/", "missing", "https://example.com/c", "/ü/", "https://other.example/d", ""],
    ]
    for items in batches:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="django_sitemaps_plus"):
            batch = section.location_urls(items, SITE)
        batch_log = [r.getMessage() for r in caplog.records]
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="django_sitemaps_plus"):
            one_by_one = [section.location_urls([item], SITE)[0] for item in items]
        assert batch == one_by_one
        assert batch_log == [r.getMessage() for r in caplog.records]
    assert section.location_urls(batches[1], SITE)[:4] == [
        "https://example.com/a/", None, "https://example.com/c", "https://example.com/%C3%BC/",
    ]  # fmt: skip


@pytest.mark.django_db
def test_model_section_by_get_absolute_url_reads_batches(registry):
    """More rows than a batch, a refused one among them: the page by
    ``get_absolute_url()`` lists what the ``url_name`` path lists."""
    Article.objects.bulk_create(
        Article(title="t", slug=slug, updated_at=dt.datetime(2024, 5, 6, tzinfo=dt.timezone.utc))
        for slug in [f"s{i}" for i in range(2_150)] + ["über", "x" * 120, "a&b"]
    )
    fast = ModelSection(
        Article, url_name="article", url_kwargs={"slug": "slug"}, max_loc_length=100,
        lastmod_fields=["updated_at"],
    )  # fmt: skip
    slow = ModelSection(Article, max_loc_length=100, lastmod_fields=["updated_at"])
    entries = list(slow.page_entries(1, SITE))
    assert entries == list(fast.page_entries(1, SITE))
    assert len(entries) == 2_152  # the 120-character slug is refused
