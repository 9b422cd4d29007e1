"""The index of a model section from kept block figures: after a save it
reads the figures of the blocks the save moved, not the whole section.

Articles in blocks of two keys (``limit=10``), ``max_loc_length`` short
enough that files are sized by count (nothing measured, so the queries
counted are the figures'). Every index after a change is compared with the
one a full pass gives (the cache emptied): the same bytes. Run on SQLite
and, with ``DATABASE_URL``, PostgreSQL; with ``CACHE_URL`` on a real cache.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.files.storage import FileSystemStorage
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_sitemaps_plus import ModelSection, register
from django_sitemaps_plus.build import build
from django_sitemaps_plus.conf import get_cache
from django_sitemaps_plus.engine import blocks, bounds, kept_figures, layout
from django_sitemaps_plus.registry import site
from django_sitemaps_plus.serving import cache as sitemap_cache
from django_sitemaps_plus.serving import quiet, versions
from django_sitemaps_plus.sites import SiteContext
from tests.testapp.models import Article, Comment, Event
from tests.utils import articles, at, fetch, lastmods, locs, require_module

pytestmark = [pytest.mark.cache, pytest.mark.django_db]


@pytest.fixture
def read_blocks(settings, registry, monkeypatch) -> Iterator[list[list[int]]]:
    """Caching on, the articles section registered: the blocks each
    ``range_figures`` call of an index read (one list per call)."""
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    register(
        Article,
        lastmod_fields=["updated_at", "comments__created_at"],
        url_name="article",
        url_kwargs={"slug": "slug"},
        limit=10,
        max_loc_length=100,
    )
    register(Event, name="events", lastmod_fields=["day"])
    calls: list[list[int]] = []
    real = blocks.range_figures

    def range_figures(queryset, spec, ranges, key_sum=True, byte_paths=()):  # type: ignore[no-untyped-def]
        # The index's figures, not a file's (a build's fingerprint, label 0).
        if queryset.model is Article and [r[0] for r in ranges] != [0]:
            calls.append([label for label, _, _ in ranges])
        return real(queryset, spec, ranges, key_sum, byte_paths)

    monkeypatch.setattr(blocks, "range_figures", range_figures)
    yield calls


def index() -> bytes:
    response, body = fetch("/sitemap.xml")
    assert response.status_code == 200
    return body


def full_pass() -> bytes:
    """The index as a full pass reads it: nothing kept."""
    get_cache().clear()
    return index()


def save(pk: int, day: int) -> None:
    article = Article.objects.get(pk=pk)
    article.updated_at = at(day)
    article.save()


def index_queries(pk: int) -> int:
    """The queries of the index after a save of article ``pk``."""
    save(pk, 9)
    with CaptureQueriesContext(connection) as queries:
        index()
    return len(queries)


def test_a_save_reads_the_figures_of_its_block_only(read_blocks):
    articles(60, updated_at=at(1))  # 30 blocks
    first = index()
    assert read_blocks == [list(range(1, 31))]  # the cold index: every block
    read_blocks.clear()
    fetch("/sitemap-articles-1.xml")  # its lookup makes the section's file token
    save(23, 9)  # block 12
    after = index()
    assert read_blocks == [[12]]
    assert after != first and b"2024-01-09" in after
    assert after == full_pass()


def test_the_queries_after_one_save_do_not_grow_with_the_rows(read_blocks):
    counts = []
    for rows in (6, 60):  # 3 blocks, then 30
        Article.objects.all().delete()
        get_cache().clear()
        articles(rows, updated_at=at(1))
        index()
        read_blocks.clear()
        counts.append(index_queries(rows // 2))
        assert read_blocks == [[blocks.block_of(rows // 2, 2)]]
    # The largest key, the block's aggregates, its comments' latest, and
    # the first file's first row (the index's sample of a URL).
    assert counts == [4, 4]


def test_a_save_elsewhere_costs_the_section_no_figure_query(read_blocks):
    articles(20, updated_at=at(1))
    index()
    read_blocks.clear()
    Event.objects.create(name="e", day=at(5).date())  # the index is cold
    with CaptureQueriesContext(connection) as queries:
        body = index()
    assert read_blocks == []
    # Neither the largest key nor a block's aggregates: only the index's
    # sample of the first file's first URL reads an article.
    sql = [q["sql"] for q in queries.captured_queries]
    assert not [q for q in sql if "testapp_article" in q and ('"_top"' in q or "_page" in q)]
    assert body == full_pass()


def test_a_comment_moves_the_block_of_its_article(read_blocks):
    articles(40, updated_at=at(1))
    index()
    read_blocks.clear()
    Comment.objects.create(article_id=37, created_at=at(9))  # block 19
    body = index()
    assert read_blocks == [[19]]
    assert b"2024-01-09" in body
    assert body == full_pass()


def test_a_comment_moved_to_another_article_moves_both_blocks(read_blocks):
    articles(40, updated_at=at(1))
    comment = Comment.objects.create(article_id=37, created_at=at(9))
    index()
    read_blocks.clear()
    comment.article_id = 5  # block 3, from block 19
    comment.save()
    body = index()
    assert read_blocks == [[3, 19]]
    assert body == full_pass()


def test_a_file_that_outgrew_its_layout_reads_every_block(read_blocks):
    articles(20, updated_at=at(1))
    index()
    read_blocks.clear()
    layout.forget_sizes(site.get("articles"), SiteContext("https://example.com"))
    save(3, 2)
    index()
    assert read_blocks == [list(range(1, 11))]


def test_new_rows_and_deleted_rows_show(read_blocks):
    articles(40, updated_at=at(1))
    index()
    read_blocks.clear()
    # Past the last block: a new block, and a new file.
    Article.objects.create(pk=61, title="new", slug="new", updated_at=at(3))
    body = index()
    assert read_blocks == [list(range(21, 32))]  # past the last kept block
    assert len(locs(body)) == 5 and body == full_pass()
    read_blocks.clear()
    index()  # warm: nothing read
    Article.objects.get(pk=61).delete()
    Article.objects.get(pk=5).delete()
    body = index()
    assert read_blocks == [[3]]  # block 31 is gone, past the rows
    assert len(locs(body)) == 4 and body == full_pass()
    read_blocks.clear()
    with connection.cursor() as cursor:  # no signal: the kept figures say 39 rows
        cursor.execute("DELETE FROM testapp_article WHERE id > 20 AND id <= 30")
    save(1, 2)
    assert len(locs(index())) == 4
    call_command("invalidate_sitemaps", "articles", verbosity=0)
    assert len(locs(index())) == 3


def test_an_update_shows_after_invalidate_or_the_reconcile_age(read_blocks, monkeypatch):
    articles(40, updated_at=at(1))
    index()
    Article.objects.filter(pk=23).update(updated_at=at(20))  # no signal
    save(3, 2)  # another block: the index is laid out again
    assert "2024-01-20" not in str(lastmods(index()))
    call_command("invalidate_sitemaps", "articles", verbosity=0)
    assert b"2024-01-20" in index()

    Article.objects.filter(pk=33).update(updated_at=at(21))
    save(3, 3)
    assert b"2024-01-21" not in index()
    later = time.time() + 3600
    monkeypatch.setattr(kept_figures.time, "time", lambda: later)
    save(3, 4)
    read_blocks.clear()
    body = index()
    assert read_blocks == [list(range(1, 21))]  # one full pass
    assert b"2024-01-21" in body


def test_a_reconcile_of_0_reads_every_block_every_time(read_blocks, settings):
    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "CACHE_RECONCILE": 0}
    articles(10, updated_at=at(1))
    index()
    save(3, 2)
    read_blocks.clear()
    index()
    assert read_blocks == [[1, 2, 3, 4, 5]]


def test_a_build_lays_out_from_the_kept_figures(read_blocks, tmp_path):
    storage = FileSystemStorage(location=str(tmp_path))
    articles(20, updated_at=at(1))
    index()
    read_blocks.clear()
    save(13, 8)  # block 7
    build(storage)
    assert read_blocks == [[7]]
    assert (tmp_path / "sitemap.xml").read_bytes() == index()
    # As the views: a write that sends no signal once invalidated.
    Article.objects.filter(pk=7).update(updated_at=at(22))
    build(storage)
    assert b"2024-01-22" not in (tmp_path / "sitemap.xml").read_bytes()
    call_command("invalidate_sitemaps", "articles", verbosity=0)
    build(storage)
    assert b"2024-01-22" in (tmp_path / "sitemap.xml").read_bytes()


def test_with_the_cache_down_every_block_is_read(read_blocks, settings):
    require_module("redis")
    articles(20, updated_at=at(1))
    expected = index()
    save(3, 1)  # the same figures: the same index
    read_blocks.clear()
    down = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:9",
    }
    settings.CACHES = {**settings.CACHES, "down": down}
    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "CACHE_ALIAS": "down"}
    assert index() == expected
    assert read_blocks == [list(range(1, 11))]


# The token hierarchy ---------------------------------------------------------------


def test_moved_blocks_are_found_a_level_at_a_time(settings, monkeypatch):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    # Within the 300 entries of the tests' local-memory cache.
    versions.bump_tokens(versions.block_tokens("s", 1, range(1, 200)))
    kept = versions.moved_blocks("s", 1, 200, None)[1]  # block 200's made
    assert versions.moved_blocks("s", 1, 200, kept)[0] == set()
    versions.bump_tokens(versions.block_tokens("s", 1, [10, 150, 300]))
    calls: list[str] = []
    real = quiet.call

    def counted(cache: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(f"{method} {len(args[0])}")
        return real(cache, method, *args, **kwargs)

    monkeypatch.setattr(sitemap_cache.quiet, "call", counted)
    # 300 is past the last block compared (the caller reads such blocks).
    assert versions.moved_blocks("s", 1, 200, kept)[0] == {10, 150}
    # The four groups of 64 blocks covering 200, then the 64 blocks of each
    # moved group: two calls, not one per block.
    assert calls == ["get_many 4", "get_many 128"]


def test_a_save_whose_tokens_were_evicted_still_shows(read_blocks):
    articles(20, updated_at=at(1))
    index()
    read_blocks.clear()
    save(13, 9)  # block 7
    keys = versions.token_keys(versions.block_tokens("articles", 2, [13]))
    get_cache().delete_many(keys)  # every level, the top's too
    body = index()
    assert read_blocks == [[7]]
    assert b"2024-01-09" in body and body == full_pass()


def test_a_section_that_changes_with_time_keeps_no_figures(settings):
    class Upcoming(ModelSection):
        model = Article
        changes_with_time = True

        def expires_at(self, number: int, site: Any) -> None:
            return None

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    assert Upcoming.changes_with_time and not kept_figures.keeps(Upcoming())
    assert kept_figures.keeps(ModelSection(Article))
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
    assert not kept_figures.keeps(ModelSection(Article))


@pytest.fixture
def units_made(monkeypatch) -> list[int]:
    """The last key of every unit the layout makes of a block (one list for all)."""
    made: list[int] = []
    real = bounds.bounded_unit

    def bounded_unit(section, entry_bound):  # type: ignore[no-untyped-def]
        unit = real(section, entry_bound)

        def counted(last_key, figures):  # type: ignore[no-untyped-def]
            made.append(last_key)
            return unit(last_key, figures)

        return counted

    monkeypatch.setattr(bounds, "bounded_unit", bounded_unit)
    return made


def test_after_a_save_only_the_files_around_its_block_are_packed_again(read_blocks, units_made):
    """The layout after a save is packed again from the file before the
    saved block's (``pagination.repack``), not from every block: the same
    files as a full pass, at a cost that does not grow with the section."""
    articles(200, updated_at=at(1))  # 100 blocks of 2 keys, 20 files of 10 URLs
    index()
    assert len(units_made) == 100
    fetch("/sitemap-articles-1.xml")
    for pk, day in ((101, 9), (3, 10), (199, 11), (200, 12)):
        units_made.clear()
        save(pk, day)
        after = index()
        # Two files of five blocks and the block that did not fit, at most.
        assert 0 < len(units_made) <= 11, (pk, sorted(units_made))
        assert after == full_pass()
        index()  # kept again: the next save packs from it


def test_rows_added_and_deleted_pack_the_files_again_as_a_full_pass(read_blocks):
    articles(60, updated_at=at(1))
    index()
    fetch("/sitemap-articles-1.xml")
    Article.objects.filter(pk__in=[11, 12, 13]).delete()  # a file gets fewer URLs
    assert index() == full_pass()
    for pk in range(61, 68):  # new rows past the last block
        Article.objects.create(pk=pk, title="n", slug=f"new-{pk}", updated_at=at(5))
    assert index() == full_pass()
    Article.objects.filter(pk__gt=40).delete()  # the last files go
    assert index() == full_pass()


@pytest.fixture
def shelves_of_five(monkeypatch) -> Iterator[None]:
    """Shelves of five blocks, none seen by this process yet."""
    monkeypatch.setattr(kept_figures, "SHELF_BLOCKS", 5)
    monkeypatch.setattr(kept_figures, "_seen", {})
    yield


def kept_header() -> Any:
    section = site.get("articles")
    assert isinstance(section, ModelSection)
    key = kept_figures.figures_key(section, SiteContext("https://example.com"), 2)
    return key, get_cache().get(key)


def test_a_save_writes_the_shelf_of_its_block_only(read_blocks, shelves_of_five):
    articles(60, updated_at=at(1))  # 30 blocks: 6 shelves of 5
    index()
    key, before = kept_header()
    assert sorted(before.shelves) == [0, 1, 2, 3, 4, 5]
    fetch("/sitemap-articles-1.xml")
    save(23, 9)  # block 12: shelf 2
    index()
    _, after = kept_header()
    moved = {shelf for shelf in after.shelves if after.shelves[shelf] != before.shelves[shelf]}
    assert moved == {2}
    assert get_cache().get(f"{key}:2")[0] == after.state


def test_a_shelf_evicted_or_rewritten_elsewhere_means_a_full_pass(read_blocks, shelves_of_five):
    articles(60, updated_at=at(1))
    index()
    fetch("/sitemap-articles-1.xml")
    key, _ = kept_header()
    for lose_shelf in (
        lambda: get_cache().delete(f"{key}:4"),  # evicted
        lambda: get_cache().set(f"{key}:4", ("another process's", {})),
    ):
        lose_shelf()
        kept_figures._seen.clear()  # as in another process
        read_blocks.clear()
        save(3, 9)
        body = index()
        assert read_blocks == [list(range(1, 31))]  # every block read again
        assert body == full_pass()
        index()


def test_blocks_read_in_any_order_are_laid_out_in_key_order(read_blocks) -> None:
    """SQL does not promise the order of a ``UNION ALL``'s rows (nor does a
    section's own ``block_figures``): the layout is the same whatever order
    the blocks come in, at a full pass and after a save."""

    class Reversed(ModelSection):
        def block_figures(self, *args: Any, **kwargs: Any) -> dict[int, blocks.BlockFigures]:
            found = super().block_figures(*args, **kwargs)
            return dict(reversed(list(found.items())))

    register(
        Reversed(
            Article,
            name="reversed",
            lastmod_fields=["updated_at", "comments__created_at"],
            url_name="article",
            url_kwargs={"slug": "slug"},
            limit=10,
            max_loc_length=100,
        )
    )
    articles(60, updated_at=at(1))
    where = SiteContext("https://example.com")

    def spans(name: str) -> list[tuple[Any, ...]]:
        section = site.get(name)
        assert isinstance(section, ModelSection)
        return [
            (s.after, s.last, s.urls, s.lastmod)
            for s in layout.current(section, where, refresh=True)
        ]

    assert len(spans("articles")) == 6 and spans("reversed") == spans("articles")
    save(23, 9)
    assert spans("reversed") == spans("articles")
