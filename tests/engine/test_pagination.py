"""Files from real sizes: no legal row left out, files as full as the data
allows, never over 50,000 URLs or 52,428,800 bytes (docs/pagination.md)."""

from __future__ import annotations

import itertools
import logging
import math
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from django_sitemaps_plus import ModelSection, Section, protocol, register
from django_sitemaps_plus.engine import measuring, pagination
from django_sitemaps_plus.extensions import Images
from django_sitemaps_plus.serving import versions
from django_sitemaps_plus.sites import SiteContext
from tests.testapp.models import Article
from tests.utils import assert_schema_valid, fetch, locs, measured_runs

pytestmark = pytest.mark.django_db

BASE = "https://example.com"
SITE = SiteContext(BASE)


def bulk_articles(count: int, slug: Any = None, published: Any = None, first: int = 1) -> None:
    """Insert ``count`` articles with primary keys ``first``.. in one
    ``executemany`` (``bulk_create`` takes seconds for 50,000 rows).
    ``slug(i)`` and ``published(i)`` give each row's values."""
    quote = connection.ops.quote_name
    columns = ["id", "title", "slug", "body", "is_published", "views"]
    sql = "INSERT INTO {} ({}) VALUES ({})".format(
        quote(Article._meta.db_table),
        ", ".join(quote(c) for c in columns),
        ", ".join(["%s"] * len(columns)),
    )
    rows = [
        (
            i,
            "t",
            slug(i) if slug else f"{i:08d}",
            "",
            published(i) if published else True,
            0,
        )
        for i in range(first, first + count)
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def escaped_slug(i: int, length: int = 1_960, ampersands: int = 450) -> str:
    """A legal slug whose location is long once escaped: ``ampersands`` of
    its characters become ``&amp;`` in the file."""
    head = f"{i:08d}-"
    return head + "&a" * ampersands + "b" * (length - len(head) - 2 * ampersands)


def schema_valid(body: bytes) -> bytes:
    assert_schema_valid(body)
    return body


def all_files(index: bytes) -> list[bytes]:
    return [fetch(url.removeprefix(BASE))[1] for url in locs(index)]


def assert_within_limits(bodies: list[bytes]) -> list[str]:
    """Each file valid and within both limits; every URL, in file order."""
    listed: list[str] = []
    for body in bodies:
        assert len(body) <= protocol.MAX_FILE_BYTES
        urls = locs(schema_valid(body))
        assert 0 < len(urls) <= protocol.MAX_URLS_PER_FILE
        listed += urls
    return listed


def fewest_files(bodies: list[bytes]) -> int:
    """The fewest files the protocol allows for what ``bodies`` hold."""
    urls = sum(len(locs(body)) for body in bodies)
    envelope = len(bodies[0]) - sum(len(e) for e in _entries(bodies[0]))
    size = sum(len(body) - envelope for body in bodies)
    room = protocol.MAX_FILE_BYTES - envelope
    return max(math.ceil(urls / protocol.MAX_URLS_PER_FILE), math.ceil(size / room))


def _entries(body: bytes) -> list[bytes]:
    start = body.index(b"<url>")
    end = body.rindex(b"</url>\n") + len(b"</url>\n")
    return [b"<url>" + part for part in body[start:end].split(b"<url>")[1:]]


class Slugs(ModelSection):
    """The fast path: locations from the ``slug`` column, default settings."""

    model = Article
    name = "articles"
    url_name = "article"
    url_kwargs = {"slug": "slug"}


class ShortUrls(Slugs):
    """Locations of at most 100 characters: 50,000 always fit a file."""

    max_loc_length = 100


class Located(ModelSection):
    """Locations from ``get_absolute_url()``: not a pattern of fields, so
    its blocks are measured (``file_sizing() == "measure"``)."""

    model = Article
    name = "articles"


# Sizing by count or by measure ---------------------------------------------------


def test_short_locations_are_sized_by_count_and_default_ones_measured():
    assert ShortUrls().urls_per_file() == protocol.MAX_URLS_PER_FILE
    assert not ShortUrls().measures_files()
    assert Slugs().measures_files()
    assert Slugs(extensions=[Images("title")], max_loc_length=100).measures_files()


@pytest.mark.slow
@pytest.mark.parametrize("section", [ShortUrls, Slugs], ids=["by-count", "measured"])
@pytest.mark.parametrize(("rows", "files"), [(50_000, 1), (50_001, 2)])
def test_exactly_50000_and_50001_urls(registry, section, rows, files):
    register(section)
    bulk_articles(rows)
    _, index = fetch("/sitemap.xml")
    assert len(locs(index)) == files
    _, first = fetch(locs(index)[0].removeprefix(BASE))
    assert first.count(b"<url>") == 50_000
    assert_schema_valid(first)
    if files == 2:
        _, second = fetch(locs(index)[1].removeprefix(BASE))
        assert locs(second) == [f"{BASE}/articles/00050001/"]


# No legal row left out -------------------------------------------------------------


def test_a_legal_location_long_once_escaped_is_listed(registry, caplog):
    # 2,000 characters with 450 '&': 3,800 bytes written, twice the old
    # per-URL budget, which left it out.
    long = "/q?" + "&a" * 450 + "b" * (2_000 - len(BASE) - 3 - 900)

    class Ampersands(Section):
        name = "amp"

        def items(self):
            return ["/ok/", long]

    register(Ampersands)
    with caplog.at_level(logging.WARNING, logger="django_sitemaps_plus"):
        _, body = fetch("/sitemap-amp-1.xml")
    assert locs(schema_valid(body)) == [f"{BASE}/ok/", BASE + long]
    assert "not listed" not in caplog.text


def test_a_section_of_only_such_rows_is_listed_whole_in_full_files(registry, monkeypatch):
    """Measured with the byte limit lowered to 400 kB (the layout reads it),
    so several files of 3,900-byte entries render quickly."""

    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 400_000)
    section = Located()
    register(section)
    bulk_articles(500, slug=escaped_slug)
    measuring.measure_blocks(section, SITE)
    _, index = fetch("/sitemap.xml")
    bodies = all_files(index)
    listed = assert_within_limits(bodies)
    assert listed == [f"{BASE}/articles/{escaped_slug(i)}/" for i in range(1, 501)]
    assert len(bodies) <= 1.25 * fewest_files(bodies) + 1


def test_worst_case_locations_full_of_ampersands(registry, monkeypatch):
    """2,048 characters, nearly all '&': about 10 kB each once written."""
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 300_000)
    path = len(BASE) + 1
    items = [f"/{i:04d}" + "&" * (protocol.MAX_LOC_LENGTH - path - 4) for i in range(100)]

    class Worst(Section):
        name = "worst"

        def items(self):
            return items

    register(Worst)
    bodies = all_files(fetch("/sitemap.xml")[1])
    assert assert_within_limits(bodies) == [BASE + item for item in items]
    assert len(bodies) <= 1.25 * fewest_files(bodies) + 1


@pytest.mark.slow
def test_worst_case_entries_of_1000_images_of_2048_characters(registry):
    """The real byte limit: each entry is about 2.1 MB, so a file holds 23."""
    image = f"{BASE}/img/" + "a" * (protocol.MAX_LOC_LENGTH - len(BASE) - 5)

    class Gallery(Section):
        name = "gallery"
        extensions = [Images(method="pictures", max_per_url=1_000)]

        def items(self):
            return [f"/g/{i}/" for i in range(30)]

        def pictures(self, item):
            return [f"{image[:-4]}{n:04d}" for n in range(1_000)]

    register(Gallery)
    bodies = all_files(fetch("/sitemap.xml")[1])
    assert len(assert_within_limits(bodies)) == 30
    assert all(body.count(b"<image:image>") == 1_000 * len(locs(body)) for body in bodies)
    assert len(bodies) <= 1.25 * fewest_files(bodies) + 1


# As full as the data allows ------------------------------------------------------


@pytest.mark.slow
def test_a_filter_keeping_a_tenth_of_the_rows_fills_one_file(registry):
    class Published(Slugs):
        queryset = Article.objects.filter(is_published=True)

    register(Published)
    bulk_articles(120_000, published=lambda i: i % 10 == 0)
    _, index = fetch("/sitemap.xml")
    assert len(locs(index)) <= 2
    assert sum(len(locs(body)) for body in all_files(index)) == 12_000


@pytest.mark.slow
def test_long_urls_fill_files_up_to_the_byte_limit(registry):
    """24,000 locations of 2,000 characters with 450 '&': about 93 MB, in
    files filled up to the byte limit once measured."""

    section = Located()
    register(section)
    bulk_articles(24_000, slug=escaped_slug)
    measuring.measure_blocks(section, SITE)
    bodies = all_files(fetch("/sitemap.xml")[1])
    assert sum(len(body) for body in bodies) > 90_000_000
    assert len(assert_within_limits(bodies)) == 24_000
    assert len(bodies) in (2, 3)


def test_sparse_keys_make_no_empty_or_thin_files(registry):
    register(Article, limit=10)
    Article.objects.create(pk=3, title="a", slug="a")
    Article.objects.create(pk=95, title="b", slug="b")
    _, index = fetch("/sitemap.xml")
    assert locs(index) == [f"{BASE}/sitemap-articles-1.xml"]
    assert locs(fetch("/sitemap-articles-1.xml")[1]) == [
        f"{BASE}/articles/a/",
        f"{BASE}/articles/b/",
    ]
    assert Client().get("/sitemap-articles-2.xml").status_code == 404


# Stable, and constant in cost ---------------------------------------------------------


def test_by_count_a_new_row_changes_the_last_file_and_a_delete_its_own(registry):
    register(Article, limit=10)
    bulk_articles(25)
    _, before = fetch("/sitemap-articles-2.xml")
    Article.objects.filter(pk=5).delete()
    Article.objects.create(pk=26, title="new", slug="new")
    fetch("/sitemap.xml")
    _, after = fetch("/sitemap-articles-2.xml")
    assert before == after
    assert len(locs(fetch("/sitemap-articles-1.xml")[1])) == 9
    assert len(locs(fetch("/sitemap-articles-3.xml")[1])) == 6


def test_sized_by_bytes_a_new_row_changes_the_last_file_and_an_edit_its_own(registry, monkeypatch):
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 200_000)
    register(Slugs, lastmod_fields=["updated_at"])
    bulk_articles(600, slug=lambda i: f"{i:08d}" + "s" * 600)
    before = all_files(fetch("/sitemap.xml")[1])
    assert len(before) >= 3
    Article.objects.create(pk=601, title="new", slug="new")
    article = Article.objects.get(pk=2)
    article.title = "edited"
    article.save()
    Article.objects.filter(pk=2).update(updated_at=article.updated_at)
    after = all_files(fetch("/sitemap.xml")[1])
    assert len(after) == len(before)
    changed = [n for n, (a, b) in enumerate(zip(before, after), 1) if a != b]
    assert changed == [len(before)]  # only the last: the title is not in the file
    Article.objects.filter(pk=2).update(slug="00000002" + "t" * 600)
    Article.objects.get(pk=2).save()
    edited = all_files(fetch("/sitemap.xml")[1])
    assert [n for n, (a, b) in enumerate(zip(after, edited), 1) if a != b] == [1]


def test_page_cost_does_not_depend_on_page_number(registry):
    register(Article, limit=10)
    bulk_articles(100)
    fetch("/sitemap.xml")  # lays the files out
    costs = []
    for number in (1, 10):
        with CaptureQueriesContext(connection) as captured:
            fetch(f"/sitemap-articles-{number}.xml")
        costs.append(len(captured))
        rows_query = captured.captured_queries[-1]["sql"].upper()
        assert "OFFSET" not in rows_query
    # Its rows only, whichever file (the index laid the files out; cache off,
    # a plain GET takes its Last-Modified from that layout).
    assert costs == [1, 1]
    assert "90" in rows_query and "100" in rows_query


def test_measured_blocks_are_kept_so_only_changed_ones_are_rendered_again(registry, monkeypatch):

    section = Located(lastmod_fields=["updated_at"])
    register(section)
    bulk_articles(25_000)
    calls = measured_runs(monkeypatch)
    # The rows of every block, measured in one query, off the request path.
    assert measuring.measure_blocks(section, SITE) == 3
    assert calls == [1]
    with CaptureQueriesContext(connection) as warm:
        fetch("/sitemap.xml")
    assert len(warm) == 2  # the figures; every block's pieces from the cache
    Article.objects.create(pk=30_001, title="new", slug="new")
    with CaptureQueriesContext(connection) as changed:
        assert measuring.measure_blocks(section, SITE) == 1
    assert "30000" in changed.captured_queries[-1]["sql"]  # the new row's block only
    assert calls == [1, 1]


# The guard ------------------------------------------------------------------------


def test_a_file_whose_rows_grew_unseen_is_cut_within_the_limits_and_logged(
    registry, monkeypatch, caplog
):
    """Rows rewritten with ``update()`` (no signal, no lastmod change) after
    the layout was made: the file ends within the byte limit, logged."""
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 100_000)
    register(Slugs)
    bulk_articles(150)
    fetch("/sitemap.xml")
    Article.objects.update(slug="x" * 1_500)
    with caplog.at_level(logging.ERROR, logger="django_sitemaps_plus"):
        _, body = fetch("/sitemap-articles-1.xml")
    assert len(body) <= protocol.MAX_FILE_BYTES
    assert 0 < len(locs(schema_valid(body))) < 150
    assert "reached the protocol's limits" in caplog.text
    # Measured again on the next request: every row listed.
    bodies = all_files(fetch("/sitemap.xml")[1])
    assert len(assert_within_limits(bodies)) == 150


# The packer -----------------------------------------------------------------------------

units = st.lists(
    st.tuples(st.integers(0, pagination.BLOCK_URLS), st.integers(0, 10_000_000)),
    max_size=80,
)
ROOM = 50_000_000


def packed(values: list[tuple[int, int]]) -> tuple[list[pagination.Unit], list[pagination.Span]]:
    made = [
        pagination.Unit(key, urls, size, None, False) for key, (urls, size) in enumerate(values, 1)
    ]
    return made, pagination.pack(made, protocol.MAX_URLS_PER_FILE, ROOM, len(made) + 1)


@given(units)
def test_packing_keeps_every_unit_once_within_the_limits(values):
    made, spans = packed(values)
    # Contiguous key ranges from the first key on, numbered 1, 2, ...
    assert [s.number for s in spans] == list(range(1, len(spans) + 1))
    assert all(a.last == b.after for a, b in itertools.pairwise(spans))
    assert not spans or spans[0].after is None
    assert sum(s.urls for s in spans) == sum(u.urls for u in made)
    assert all(s.urls <= protocol.MAX_URLS_PER_FILE for s in spans)
    # Each file's bytes within the room: its units are the keys in its range.
    for span in spans:
        inside = [u for u in made if (span.after or 0) < u.last_key <= span.last]
        assert span.size == sum(u.size for u in inside)
        assert span.size <= ROOM or len(inside) == 1
    by_count = pagination.pack(made, protocol.MAX_URLS_PER_FILE, 0, len(made) + 1, measured=False)
    assert all(span.size is None for span in by_count)
    assert sum(s.urls for s in by_count) == sum(u.urls for u in made)
    # Units are at most a fifth of a file either way: each file but the last
    # is four fifths full by URLs or by bytes.
    urls, size = sum(u.urls for u in made), sum(u.size for u in made)
    assert len(spans) <= 1.25 * (urls / protocol.MAX_URLS_PER_FILE + size / ROOM) + 1


@given(st.lists(st.integers(0, pagination.BLOCK_URLS), max_size=80), st.booleans())
def test_packing_by_one_limit_needs_at_most_a_quarter_more_files_plus_one(sizes, by_bytes):
    values = [(1, size * 1_000) if by_bytes else (size, 0) for size in sizes]
    made, spans = packed(values)
    if by_bytes:
        fewest = math.ceil(sum(u.size for u in made) / ROOM)
    else:
        fewest = math.ceil(sum(u.urls for u in made) / protocol.MAX_URLS_PER_FILE)
    assert len(spans) <= 1.25 * fewest + 1


def _three_articles_then_the_index() -> Any:
    """Three articles of one lastmod in a measured section, and the index
    requested (it lays the files out); the lastmod."""
    import datetime as dt

    register(Slugs, lastmod_fields=["updated_at"])
    when = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    Article.objects.bulk_create(
        Article(pk=i, title="t", slug=f"s{i}", updated_at=when) for i in range(1, 4)
    )
    fetch("/sitemap.xml")
    return when


def test_a_file_after_its_index_needs_no_figures_query_until_a_save(registry, settings):
    """With the cache on, the layout is kept with the section's version: a file
    requested after the index takes its Last-Modified from it (one query, the
    rows: the first byte waits for nothing else); a save makes it read the
    file's figures again."""
    import datetime as dt

    from django.utils.http import http_date

    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "CACHE": True}
    versions.invalidate()
    when = _three_articles_then_the_index()
    with CaptureQueriesContext(connection) as rows_only:
        response, _ = fetch("/sitemap-articles-1.xml")
    assert len(rows_only) == 1
    assert response["Last-Modified"] == http_date(when.timestamp())
    article = Article.objects.get(pk=2)
    article.updated_at = later = when + dt.timedelta(days=3)
    article.save()
    with CaptureQueriesContext(connection) as after_save:
        response, _ = fetch("/sitemap-articles-1.xml")
    assert len(after_save) == 2  # the file's figures, then its rows
    assert response["Last-Modified"] == http_date(later.timestamp())


def test_measured_blocks_share_few_cache_entries_so_a_small_cache_keeps_them(registry, monkeypatch):
    """600 blocks on ten shelves: Django's local-memory cache (300 entries)
    keeps them all, and a second index measures nothing."""
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 200_000)
    section = Located(limit=50)  # blocks of ten keys
    register(section)
    bulk_articles(6_000)
    assert section.file_sizing() == "measure"
    section.index_pages(SITE)
    calls = measured_runs(monkeypatch)
    section.index_pages(SITE)
    assert calls == []


def test_rendered_per_request_an_unconditional_file_takes_its_lastmod_from_the_index(
    registry,
):
    """Cache off: a plain GET after the index makes one query (the rows), its
    Last-Modified the index's; a conditional GET reads the file's figures, so
    a change since is never answered 304."""
    import datetime as dt

    from django.utils.http import http_date

    when = _three_articles_then_the_index()
    with CaptureQueriesContext(connection) as plain:
        response, _ = fetch("/sitemap-articles-1.xml")
    assert len(plain) == 1
    assert response["Last-Modified"] == http_date(when.timestamp())
    later = when + dt.timedelta(days=3)
    Article.objects.filter(pk=2).update(updated_at=later)
    since = http_date(when.timestamp())
    with CaptureQueriesContext(connection) as conditional:
        response = Client().get("/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=since)
    assert response.status_code == 200
    assert len(conditional) == 2  # the file's figures, then its rows
    assert response["Last-Modified"] == http_date(later.timestamp())


class _ArticleQuerySet(Section):
    """A plain section of a QuerySet, its files sized by measure (default
    ``max_loc_length``)."""

    name = "plain"

    def items(self):
        return Article.objects.order_by("pk")


@pytest.mark.parametrize("file_bytes", [None, 30_000], ids=["one-file", "measured"])
def test_a_plain_queryset_file_after_its_index_asks_no_count(registry, monkeypatch, file_bytes):
    """Whether a QuerySet of items is measured (its ``COUNT``) is decided by
    the index and kept with its layout: a file after the index reads its
    rows only, whether the layout was made by count (three rows fit a file)
    or measured (a 30,000-byte limit: three worst-case entries would not)."""
    if file_bytes:
        monkeypatch.setattr(protocol, "MAX_FILE_BYTES", file_bytes)
    register(_ArticleQuerySet)
    bulk_articles(3)
    with CaptureQueriesContext(connection) as index:
        _, body = fetch("/sitemap.xml")
    assert locs(body) == [f"{BASE}/sitemap-plain-1.xml"]
    # By count: one COUNT and the sample (the file's first rows); measured:
    # the COUNT and the rows, read once.
    assert len(index) == 2
    with CaptureQueriesContext(connection) as file:
        _, body = fetch("/sitemap-plain-1.xml")
    assert [q["sql"].split()[0] for q in file.captured_queries] == ["SELECT"]
    assert "COUNT" not in file.captured_queries[0]["sql"].upper()
    assert locs(body) == [f"{BASE}/articles/{i:08d}/" for i in range(1, 4)]


def test_a_plain_queryset_grown_past_its_kept_layout_is_not_measured_by_a_file(
    registry, monkeypatch
):
    """Laid out by count when it held one row, the section then grows to
    six with no index between: its file is the page the index listed, as
    much as a file of worst-case entries may hold (two, under a 30,000-byte
    limit), not a layout measured for the file request; the next index
    measures and lists them all."""
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 30_000)
    section = _ArticleQuerySet()
    register(section)
    bulk_articles(1)
    fetch("/sitemap.xml")
    bulk_articles(5, first=2)
    assert section.items_per_file() == 2
    _, body = fetch("/sitemap-plain-1.xml")
    assert locs(schema_valid(body)) == [f"{BASE}/articles/{i:08d}/" for i in (1, 2)]
    bodies = all_files(fetch("/sitemap.xml")[1])
    assert assert_within_limits(bodies) == [f"{BASE}/articles/{i:08d}/" for i in range(1, 7)]


class _PerItemPriority(Section):
    varies_per_item = True
    name = "per-item"

    def get_priority(self, item: Any) -> float:
        return 0.5


@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.none(),
                st.text(
                    st.sampled_from(["a", "&", "é", "/", "中", "'", "<"]), min_size=1, max_size=30
                ).map(lambda path: f"{BASE}/{path}"),
            ),
            st.one_of(st.none(), st.just("2024-01-01T00:00:00Z")),
        ),
        max_size=20,
    ),
    st.sampled_from([Section(), Section(priority=0.3, changefreq="daily"), _PerItemPriority()]),
)
def test_the_layout_measures_what_the_file_writes(values, section):
    """Each row's URLs and bytes, as measured, add up to the entries written
    (clean batches at C speed, escaped or non-ASCII ones per entry)."""
    from django_sitemaps_plus.engine import render

    rows = [(n, url, lastmod, None) for n, (url, lastmod) in enumerate(values)]
    urls, sizes = render.measure(section, rows, SITE)
    written = render.entries(section, rows, SITE)
    assert len(urls) == len(sizes) == len(rows)
    assert sum(urls) == len(written)
    assert sum(sizes) == len("".join(written).encode())


# Packing again where units moved (``pagination.repack``) ------------------------

_UNIT = st.tuples(
    st.integers(min_value=1, max_value=40),  # URLs
    st.integers(min_value=1, max_value=400),  # bytes
    st.integers(min_value=0, max_value=50),  # lastmod: a day
    st.booleans(),  # undated
)


def _units(by_block: dict[int, tuple[int, int, int, bool]]) -> list[pagination.Unit]:
    import datetime as dt

    day = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    return [
        pagination.Unit(block * 10, urls, size, day + dt.timedelta(days=d), undated)
        for block, (urls, size, d, undated) in sorted(by_block.items())
    ]


@given(
    before=st.dictionaries(st.integers(min_value=1, max_value=60), _UNIT, max_size=60),
    moves=st.dictionaries(
        st.integers(min_value=1, max_value=70), st.one_of(st.none(), _UNIT), max_size=8
    ),
    measured=st.booleans(),
)
def test_packing_again_where_units_moved_makes_the_files_a_full_pack_makes(before, moves, measured):
    """Whatever units are added, removed or changed, packing again from the
    previous files gives exactly the files of packing every unit anew
    (numbers, edges, counts, sizes and lastmods), so an index after a save
    lists what it would have listed after a cache flush."""
    after = {b: u for b, u in {**before, **moves}.items() if u is not None}
    changed = [block * 10 for block in moves if before.get(block) != moves[block]]
    old_end, new_end = max(before, default=0) * 10, max(after, default=0) * 10
    previous = pagination.pack(_units(before), 100, 1000, old_end, measured=measured)
    units = _units(after)

    def units_after(key):
        return [u for u in units if key is None or u.last_key > key]

    expected = pagination.pack(units, 100, 1000, new_end, measured=measured)
    assert (
        pagination.repack(previous, units_after, changed, 100, 1000, new_end, measured=measured)
        == expected
    )
