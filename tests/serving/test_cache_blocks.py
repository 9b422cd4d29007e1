"""A model section's cached files are keyed by the key blocks they hold:
one save makes one file cold, not every file of its section.

Five files of ten articles (``limit=10``: blocks of two keys), warmed; then
one change, and every file requested again: the files whose rows changed
are rendered (their rows read, counted through ``range_rows``), the others
are cache hits with the ETags they had; a static build renders and
writes only the files whose fingerprint moved. Run on SQLite and, with
``DATABASE_URL``, PostgreSQL; with ``CACHE_URL`` on a real cache.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from django.core.files.storage import FileSystemStorage
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

import django_sitemaps_plus.conf as sitemaps_conf
from django_sitemaps_plus import ModelSection, register
from django_sitemaps_plus.build import BuildFailed, build
from django_sitemaps_plus.engine import fingerprints, kept_figures, layout
from django_sitemaps_plus.registry import site
from django_sitemaps_plus.serving import versions
from django_sitemaps_plus.sites import SiteContext
from tests.build.test_build_tasks import needs_tasks, use_backend
from tests.testapp.models import Article, Comment, Tag
from tests.utils import articles, at, failing_file, fetch, locs

pytestmark = [pytest.mark.cache, pytest.mark.django_db]

FILES = range(1, 6)


@pytest.fixture
def rendered(settings, registry, monkeypatch) -> Iterator[list[int]]:
    """Caching on, 50 articles in five files, every file warm: the numbers
    of the files whose rows are read from then on."""
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    register(
        Article,
        queryset=Article.objects.filter(is_published=True),
        lastmod_fields=["updated_at", "comments__created_at", "tags__updated_at"],
        url_name="article",
        url_kwargs={"slug": "slug"},
        limit=10,
    )
    articles(50, updated_at=at(1))
    read: list[int] = []
    sampled: list[int] = []
    real = ModelSection.range_rows
    real_sample = ModelSection._has_url

    def range_rows(self, after, last, site_):  # type: ignore[no-untyped-def]
        read.append(last // 10)
        return real(self, after, last, site_)

    def has_url(self, page, site_):  # type: ignore[no-untyped-def]
        # The sample an index or a build reads (``listed_pages``: the first
        # file's rows up to its first URL) is counted apart from renders.
        sampled.append(page.number)
        count = len(read)
        try:
            return real_sample(self, page, site_)
        finally:
            del read[count:]

    monkeypatch.setattr(ModelSection, "range_rows", range_rows)
    monkeypatch.setattr(ModelSection, "_has_url", has_url)
    index = locs(fetch("/sitemap.xml")[1])
    assert index == [f"https://example.com/sitemap-articles-{n}.xml" for n in FILES]
    assert sampled == [1] and read == []
    for number in FILES:
        fetch(f"/sitemap-articles-{number}.xml")
    assert read == list(FILES)
    read.clear()
    yield read


def etags() -> dict[int, str]:
    return {n: Client().get(f"/sitemap-articles-{n}.xml")["ETag"] for n in FILES}


def served(read: list[int]) -> tuple[dict[int, str], list[int]]:
    """Every file requested (a full GET each): their ETags, and the files
    whose rows were read to answer them."""
    read.clear()
    tags = etags()
    return tags, sorted(read)


def test_a_warm_section_reads_no_rows(rendered):
    before = etags()
    assert served(rendered) == (before, [])


def test_a_save_renders_the_file_of_its_row_only(rendered):
    before = etags()
    article = Article.objects.get(pk=23)
    article.updated_at = at(9)
    article.save()
    after, read = served(rendered)
    assert read == [3]
    assert {n for n in FILES if after[n] != before[n]} == {3}
    # The others answer a crawler's revalidation with a 304; the changed
    # one never confirms the version sent before.
    again = Client().get("/sitemap-articles-1.xml", HTTP_IF_NONE_MATCH=before[1])
    assert again.status_code == 304
    changed = Client().get("/sitemap-articles-3.xml", HTTP_IF_NONE_MATCH=before[3])
    assert changed.status_code == 200 and changed["ETag"] == after[3]


def test_a_many_to_many_change_renders_the_files_of_its_rows(rendered):
    # A tag's own save: its articles are found by no key (every file).
    tag = Tag.objects.create(name="t", updated_at=at(9))
    assert served(rendered)[1] == list(FILES)
    # Linked: the files of the rows on the section's side.
    Article.objects.get(pk=14).tags.add(tag)
    assert served(rendered)[1] == [2]
    tag.articles.add(*Article.objects.filter(pk__in=[1, 45]))
    assert served(rendered)[1] == [1, 5]
    assert b"2024-01-09" in fetch("/sitemap-articles-5.xml")[1]


def test_the_index_still_sees_every_save(rendered):
    Article.objects.filter(pk=23).update(updated_at=at(9))
    Article.objects.get(pk=23).save()
    body = fetch("/sitemap.xml")[1].decode()
    assert body.count("2024-01-09") == 1


def test_a_comment_renders_the_file_of_its_article(rendered):
    before = etags()
    comment = Comment.objects.create(article_id=37, created_at=at(9))
    after, read = served(rendered)
    assert read == [4]
    assert {n for n in FILES if after[n] != before[n]} == {4}
    # Moved to another article: the file it leaves and the one it joins.
    comment.article_id = 5
    comment.save()
    read = served(rendered)[1]
    assert read == [1, 4]
    assert b"2024-01-09" not in fetch("/sitemap-articles-4.xml")[1]
    assert b"2024-01-09" in fetch("/sitemap-articles-1.xml")[1]
    # Deleted: the file of its article.
    comment.delete()
    assert served(rendered)[1] == [1]


def test_a_delete_renders_the_file_that_held_the_row(rendered):
    before = etags()
    Article.objects.get(pk=45).delete()
    after, read = served(rendered)
    assert read == [5]
    assert {n for n in FILES if after[n] != before[n]} == {5}
    assert "article-44" not in fetch("/sitemap-articles-5.xml")[1].decode()


def test_an_unpublished_row_leaves_its_file(rendered):
    article = Article.objects.get(pk=12)
    article.is_published = False
    article.save()
    assert served(rendered)[1] == [2]
    assert len(locs(fetch("/sitemap-articles-2.xml")[1])) == 9


def test_a_location_change_without_a_lastmod_change_renders_its_file(rendered):
    # The slug is in no figure of the file (count, key sum, lastmod): the
    # save's block token is what makes the file cold.
    article = Article.objects.get(pk=8)
    article.slug = "renamed"
    article.save()
    assert served(rendered)[1] == [1]
    assert "https://example.com/articles/renamed/" in locs(fetch("/sitemap-articles-1.xml")[1])


def test_saves_in_a_transaction_render_their_files_after_the_commit(rendered):
    with transaction.atomic():
        for pk in (3, 48):
            article = Article.objects.get(pk=pk)
            article.updated_at = at(9)
            article.save()
    assert served(rendered)[1] == [1, 5]


def test_an_update_is_seen_after_invalidate_sitemaps(rendered):
    before = etags()
    Article.objects.filter(pk=23).update(slug="updated")
    # No signal: every file is still the one cached.
    assert served(rendered) == (before, [])
    call_command("invalidate_sitemaps", "articles", verbosity=0)
    after, read = served(rendered)
    assert read == list(FILES)
    assert {n for n in FILES if after[n] != before[n]} == {3}


def test_a_changed_section_setting_makes_every_file_cold(rendered):
    section = site.get("articles")
    assert isinstance(section, ModelSection)
    section.changefreq = "daily"
    try:
        assert served(rendered)[1] == list(FILES)
        assert b"<changefreq>daily</changefreq>" in fetch("/sitemap-articles-2.xml")[1]
    finally:
        section.changefreq = None


def test_a_file_tells_its_tokens_from_its_key_range():
    # Blocks of two keys: file (10, 20] shows the tokens of blocks 6 to 10;
    # a file over sparse keys reads coarser ones, never more than FILE_TOKENS.
    assert versions.range_tokens("s", 2, 10, 20) == [f"s#2:0:{b}" for b in range(5, 10)]
    sparse = versions.range_tokens("s", 2, None, 10_000_000)
    assert 0 < len(sparse) <= versions.FILE_TOKENS
    bumped = versions.block_tokens("s", 2, [9_999_999])
    assert set(sparse) & bumped
    assert not set(versions.range_tokens("s", 2, 10, 20)) & bumped


# Builds that render only what changed ---------------------------------------------


@pytest.fixture
def built(rendered, tmp_path) -> tuple[FileSystemStorage, Path]:
    """The five files built once (``CACHE`` on: saves bump block tokens)."""
    out = tmp_path / "built"
    storage = FileSystemStorage(location=str(out))
    first = build(storage, text=True)
    assert len(first.written) == 11  # five XML, five text, the index
    rendered.clear()
    return storage, out


def mtimes(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name.startswith("sitemap-")}


def test_a_build_after_one_save_renders_one_file_and_the_index(rendered, built):
    storage, out = built
    before = mtimes(out)
    again = build(storage, text=True)
    assert again.written == [] and rendered == []
    article = Article.objects.get(pk=23)
    article.updated_at = at(9)
    article.save()
    after = build(storage, text=True)
    # The XML file and its text twin are rendered; the text (no lastmod in
    # it) hashes as before and is not written.
    assert rendered == [3, 3]
    assert after.written == ["sitemap-articles-3.xml", "sitemap.xml"]
    now = mtimes(out)
    assert {n for n in now if now[n] != before[n]} == {"sitemap-articles-3.xml"}
    assert b"2024-01-09" in (out / "sitemap-articles-3.xml").read_bytes()
    assert b"2024-01-09" in (out / "sitemap.xml").read_bytes()
    # What the views serve, byte for byte.
    for name in ("sitemap-articles-3.xml", "sitemap-articles-2.xml"):
        assert (out / name).read_bytes() == fetch(f"/{name}")[1]


def test_a_build_sees_an_edit_no_figure_sees_and_a_related_row(rendered, built):
    storage, _ = built
    article = Article.objects.get(pk=8)
    article.slug = "renamed"  # no lastmod field moves
    article.save()
    Comment.objects.create(article_id=41, created_at=at(2))
    result = build(storage)
    assert sorted(rendered) == [1, 5]
    assert result.written == ["sitemap-articles-1.xml", "sitemap-articles-5.xml", "sitemap.xml"]


def test_a_build_after_an_update_renders_its_file_once_invalidated(rendered, built):
    storage, _ = built
    Article.objects.filter(pk=23).update(slug="updated")
    assert build(storage).written == []  # no signal: as the cache, unchanged
    call_command("invalidate_sitemaps", "articles", verbosity=0)
    result = build(storage)
    assert sorted(rendered) == list(FILES)
    assert result.written == ["sitemap-articles-3.xml"]


def test_a_build_after_one_save_reads_no_file_s_figures(rendered, built, monkeypatch):
    """The fingerprints are summed from the kept block figures: no range
    aggregate per file (at 10^7 rows, one pass over every row)."""
    storage, _ = built
    aggregated: list[tuple[int | None, int]] = []
    real = ModelSection.range_figures

    def range_figures(self, site_, after, last, key_sum=False):  # type: ignore[no-untyped-def]
        aggregated.append((after, last))
        return real(self, site_, after, last, key_sum)

    monkeypatch.setattr(ModelSection, "range_figures", range_figures)
    Comment.objects.create(article_id=23, created_at=at(9))
    with CaptureQueriesContext(connection) as queries:
        result = build(storage)
    assert aggregated == [] and rendered == [3]
    assert result.written == ["sitemap-articles-3.xml", "sitemap.xml"]
    # The saved block's figures (its rows and its comments' latest), the
    # largest key, the first file's sample of a URL and file 3's rows: no
    # query per file.
    assert len(queries) <= 8, [q["sql"] for q in queries]


def test_a_file_s_summed_figures_are_its_range_aggregate(rendered):
    Comment.objects.create(article_id=17, created_at=at(12))
    Article.objects.filter(pk=31).update(is_published=False)
    call_command("invalidate_sitemaps", "articles", verbosity=0)
    section = site.get("articles")
    assert isinstance(section, ModelSection)
    where = SiteContext("https://example.com")
    spans = layout.current(section, where, refresh=True)
    kept = kept_figures.read(section, where, section.block_width()).figures
    for span in spans:
        summed = layout.span_figures(section, span, where, kept)
        assert summed == section.range_figures(where, span.after, span.last, key_sum=True)
    # Edges inside a block: read from the rows.
    inside = replace(spans[1], after=spans[1].after + 1)
    assert layout.span_figures(section, inside, where, kept) == section.range_figures(
        where, inside.after, inside.last, key_sum=True
    )


def test_a_file_range_evicted_alone_is_kept_again(rendered):
    section = site.get("articles")
    assert isinstance(section, ModelSection)
    key = layout._ranges_key(
        layout._layout_key(fingerprints.signature(section, SiteContext("https://example.com")))
    )
    cache = sitemaps_conf.get_cache()
    assert cache.get(key) == ((None, 10), (10, 20), (20, 30), (30, 40), (40, 50))
    cache.delete(key)
    before = etags()
    assert served(rendered) == (before, [])
    assert cache.get(key) is not None


# The same in every mode of a build: worker processes, task workers -------------


def _slug_change(pk: int) -> None:
    article = Article.objects.get(pk=pk)
    article.slug = f"renamed-{pk}"  # no lastmod field moves
    article.save()


@pytest.mark.django_db(transaction=True)  # committed rows: the workers read them
@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="worker processes are forked"
)
def test_a_build_with_workers_renders_only_the_files_whose_fingerprint_moved(
    rendered, built, tmp_path, monkeypatch
):
    storage, out = built
    log = tmp_path / "rendered"
    counted = ModelSection.range_rows

    def logged(self, after, last, site_):  # type: ignore[no-untyped-def]
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()} {last // 10}\n")
        return counted(self, after, last, site_)

    monkeypatch.setattr(ModelSection, "range_rows", logged)
    _slug_change(23)
    result = build(storage, text=True, jobs=2)
    lines = [line.split() for line in log.read_text().splitlines()]
    # Rendered in the workers: file 3 (its XML and text) and nothing else.
    assert sorted(int(n) for pid, n in lines if pid != str(os.getpid())) == [3, 3]
    assert result.written == ["sitemap-articles-3.xml", "sitemap-articles-3.txt"]
    others = {f"sitemap-articles-{n}.{ext}" for n in FILES if n != 3 for ext in ("xml", "txt")}
    assert others <= set(result.skipped)
    assert "renamed-23" in (out / "sitemap-articles-3.txt").read_text()


@needs_tasks
def test_an_enqueued_build_renders_only_the_files_whose_fingerprint_moved(
    rendered, built, settings
):
    storage, out = built
    use_backend(settings, "immediate")
    # A changed setting made every file cold (the cache's too): built again.
    assert build(storage, text=True).written == []
    rendered.clear()
    _slug_change(8)
    stdout = io.StringIO()
    call_command(
        "build_sitemaps", "--dir", str(out), "--text", "--enqueue", "--format", "json",
        stdout=stdout,
    )  # fmt: skip
    assert json.loads(stdout.getvalue())["enqueued"] == 5
    # Every job ran as a task; only file 1's rendered its rows.
    assert rendered == [1, 1]
    assert "renamed-8" in (out / "sitemap-articles-1.txt").read_text()
    assert "renamed-8" not in (out / "sitemap-articles-2.txt").read_text()


def test_a_failed_build_is_resumed_only_where_the_fingerprint_held(rendered, built, monkeypatch):
    storage, out = built
    _slug_change(8)  # file 1
    _slug_change(23)  # file 3
    real = failing_file(monkeypatch, 3, "file 3 fails")
    with pytest.raises(BuildFailed):
        build(storage)
    assert "renamed-8" in (out / "sitemap-articles-1.xml").read_text()
    monkeypatch.setattr(ModelSection, "page_entries", real)
    # File 1 changes again after its job's record was written: no lastmod,
    # URL count or key range moves, its fingerprint does.
    _slug_change(9)
    result = build(storage)
    assert "sitemap-articles-1.xml" not in result.resumed
    assert "renamed-9" in (out / "sitemap-articles-1.xml").read_text()
    assert "renamed-23" in (out / "sitemap-articles-3.xml").read_text()
