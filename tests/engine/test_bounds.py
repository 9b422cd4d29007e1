"""Files sized by a byte bound computed in SQL (docs/pagination.md): a
``url_name`` section's index renders nothing, its bound is never below what
its files hold, and a section whose locations cannot be bounded is measured
off the request path only."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from django_sitemaps_plus import ModelSection, protocol, register
from django_sitemaps_plus.engine import blocks, bounds, measuring, render
from django_sitemaps_plus.extensions import Images
from django_sitemaps_plus.sites import SiteContext
from tests.engine.test_pagination import (
    Located,
    ShortUrls,
    Slugs,
    all_files,
    assert_within_limits,
    bulk_articles,
)
from tests.testapp.models import Article, Author, UuidThing
from tests.utils import fetch, locs, measured_runs

pytestmark = pytest.mark.django_db

BASE = "https://example.com"
SITE = SiteContext(BASE)


class TwoFields(ModelSection):
    """A pattern of a slug and an integer column: ``/a/<first>/b/<second>/``."""

    model = Article
    name = "articles"
    url_name = "two-kwargs"
    url_kwargs = {"first": "slug", "second": "views"}


def rendered(monkeypatch: Any) -> dict[str, int]:
    """Count what renders entries: ``render.measure`` (a layout's measure),
    the batch writer, and one entry at a time."""
    counts = {"measure": 0, "batch": 0, "entry": 0}

    def counting(name: str, original: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return original(*args, **kwargs)

        return counted

    monkeypatch.setattr(render, "measure", counting("measure", render.measure))
    writer = render.EntryWriter
    monkeypatch.setattr(writer, "write_clean_batch", counting("batch", writer.write_clean_batch))
    monkeypatch.setattr(writer, "write", counting("entry", writer.write))
    return counts


# How files are sized ---------------------------------------------------------------


def test_each_section_says_how_its_files_are_sized():
    assert ShortUrls().file_sizing() == "count"
    assert Slugs().file_sizing() == "bound"
    assert TwoFields().file_sizing() == "bound"
    assert Located().file_sizing() == "measure"
    # An extension's children are not bounded from columns.
    assert Slugs(extensions=[Images("title")]).file_sizing() == "measure"
    # A field across a many-valued relation has no one value per row.
    assert Slugs(url_kwargs={"slug": "tags__name"}).file_sizing() == "measure"


def test_which_fields_sql_measures_in_bytes():
    assert blocks.value_bytes_source(Article, "slug") == "slug"
    assert blocks.value_bytes_source(Article, "views") == "views"
    assert blocks.value_bytes_source(Article, "author") == "author"  # its key
    assert blocks.value_bytes_source(Article, "author__name") == "author__name"
    assert blocks.value_bytes_source(UuidThing, "id") == blocks.UUID_TEXT_BYTES
    assert blocks.value_bytes_source(Article, "published_on") is None
    assert blocks.value_bytes_source(Article, "tags__name") is None
    assert blocks.value_bytes_source(Article, "nothing") is None


# The byte length in SQL --------------------------------------------------------------


def test_the_longest_value_is_counted_in_utf8_bytes():
    """Cyrillic is two bytes a letter; quotes and ampersands one each."""
    author = Author.objects.create(name="Пушкин")  # 12 bytes
    Article.objects.create(pk=1, title="t", slug="привет-мир", author=author, views=7)
    Article.objects.create(pk=2, title="t", slug="a&b'c\"d<e", views=123456)
    Article.objects.create(pk=3, title="t", slug="plain", views=0)
    articles = Article.objects.all()
    found = blocks.figures(
        articles,
        Slugs().lastmod_spec,
        2,
        400,
        blocks.last_block(articles, 2),
        byte_paths=["slug", "views", "author__name", "author"],
    )
    assert found[1].field_bytes == (len("привет-мир".encode()), 6, 12, len(str(author.pk)))
    assert found[2].field_bytes == (5, 1, 0, 0)  # no author: no value
    # One block to a query says the same.
    grouped = blocks.figures(articles, Slugs().lastmod_spec, 2, 1, 2, byte_paths=["slug", "views"])
    assert [f.field_bytes for f in grouped.values()] == [(19, 6), (5, 1)]


slugs = st.text(
    st.sampled_from(["a", "Z", "9", "-", "&", "'", '"', "<", " ", "%", "é", "ж", "中", "😀", "#"]),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.lists(st.tuples(slugs, st.integers(0, 10**9)), min_size=1, max_size=12))
@pytest.mark.parametrize("section_class", [Slugs, TwoFields])
def test_the_bound_is_never_below_what_a_block_renders(values, section_class):
    """Any slug (escaped, percent-encoded, non-ASCII): each entry and each
    block, as written, within the bound its figures give."""
    Article.objects.all().delete()
    Article.objects.bulk_create(
        Article(pk=i, title="t", slug=slug, views=views)
        for i, (slug, views) in enumerate(values, 1)
    )
    section = section_class()
    width = 3
    bound = bounds.location_bound(section)
    assert bound is not None
    entry_bound = bounds.location_entry_bound(section, SITE, bound)
    articles = Article.objects.all()
    found = blocks.figures(
        articles,
        section.lastmod_spec,
        width,
        400,
        blocks.last_block(articles, width),
        byte_paths=bound.paths,
    )
    for block, figures in found.items():
        sizes: list[int] = []
        for rows in section.range_rows(*blocks.block_bounds(block, width), SITE):
            sizes += render.measure(section, rows, SITE)[1]
        assert max(sizes) <= entry_bound(figures)
        assert sum(sizes) <= section.figure_urls(figures) * entry_bound(figures)


# Sized by the bound: nothing rendered -------------------------------------------------


def test_a_cold_index_renders_nothing_and_keeps_files_of_50000_urls(registry, monkeypatch):
    """60,000 rows of the default settings: one grouped pass (the largest key,
    then every block's figures in one query) and the sample of the first
    file (its first URL, one entry written), no entry measured; files of
    50,000 URLs, as when they were measured."""
    register(Slugs, lastmod_fields=["updated_at"])
    bulk_articles(60_000)
    counts = rendered(monkeypatch)
    blocks_measured = measured_runs(monkeypatch)
    with CaptureQueriesContext(connection) as cold:
        _, index = fetch("/sitemap.xml")
    assert len(locs(index)) == 2
    assert counts == {"measure": 0, "batch": 0, "entry": 1}  # the sample's first URL
    assert blocks_measured == []
    assert len(cold) == 3  # the largest key, the blocks' figures, the sample's rows
    pages = Slugs().index_pages(SITE)
    assert [page.url_count for page in pages] == [50_000, 10_000]


def test_with_ordinary_slugs_the_bound_lays_files_out_as_measuring_does(registry):
    """The same rows, as a ``url_name`` section (bound) and through
    ``get_absolute_url()`` once measured: the same files, key range for key
    range (5,000 URLs a file, so both are sized by bytes)."""
    bulk_articles(12_345)
    bounded = Slugs(limit=5_000)
    assert bounded.file_sizing() == "bound"
    measured = Located(limit=5_000)
    assert measuring.measure_blocks(measured, SITE) == 13

    def files(section: ModelSection) -> list[tuple[Any, ...]]:
        spans = [page.prepared for page in section.index_pages(SITE)]
        return [(s.after, s.last, s.urls, s.lastmod) for s in spans]

    assert files(bounded) == files(measured)
    assert [urls for *_, urls, _ in files(bounded)] == [5_000, 5_000, 2_345]


def test_extremely_long_slugs_give_smaller_files_within_the_limits(registry, monkeypatch):
    """600 slugs of 600 characters under a 200,000-byte limit: a block's
    bound exceeds a file, so the section is read again in narrower blocks;
    every row is listed, in files within the limits, nothing rendered to
    lay them out."""
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 200_000)
    register(Slugs)
    bulk_articles(600, slug=lambda i: f"{i:08d}" + "s" * 592)
    counts = rendered(monkeypatch)
    _, index = fetch("/sitemap.xml")
    assert counts["measure"] == 0
    bodies = all_files(index)
    assert len(bodies) > 3
    listed = assert_within_limits(bodies)
    assert listed == [f"{BASE}/articles/{i:08d}{'s' * 592}/" for i in range(1, 601)]


# Sized by measure: off the request path ----------------------------------------------


def test_an_index_never_measures_and_measure_sitemaps_fills_the_files(
    registry, monkeypatch, caplog
):
    """A ``get_absolute_url()`` section: the index sizes its unmeasured blocks
    by the worst case (more, smaller files, every row listed) and says how to
    fill them; the command measures them, and the next index packs them by
    their real bytes."""
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 200_000)
    section = Located(limit=50)  # blocks of ten keys
    register(section)
    bulk_articles(1_000)
    calls = measured_runs(monkeypatch)
    with caplog.at_level("INFO", logger="django_sitemaps_plus"):
        worst_case = all_files(fetch("/sitemap.xml")[1])
    assert calls == []
    assert "100 of 100 key blocks are not measured yet" in caplog.text
    assert "manage.py measure_sitemaps" in caplog.text
    caplog.clear()
    expected = [f"{BASE}/articles/{i:08d}/" for i in range(1, 1_001)]
    assert assert_within_limits(worst_case) == expected
    call_command("measure_sitemaps", verbosity=0)
    assert calls  # the blocks, rendered by the command
    calls.clear()
    with caplog.at_level("INFO", logger="django_sitemaps_plus"):
        measured = all_files(fetch("/sitemap.xml")[1])
    assert calls == []
    assert "not measured yet" not in caplog.text
    assert assert_within_limits(measured) == expected
    assert len(measured) < len(worst_case)
    # Measured already: the command renders nothing more.
    assert measuring.measure_blocks(section, SITE) == 0


def test_measure_sitemaps_names_unknown_sections(registry):
    from django.core.management.base import CommandError

    register(Located)
    with pytest.raises(CommandError) as raised:
        call_command("measure_sitemaps", "nope")
    assert raised.value.returncode == 2


def test_a_build_measures_before_it_lays_files_out(registry, tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 200_000)
    section = Located(limit=50)
    register(section)
    bulk_articles(300)
    call_command("build_sitemaps", dir=str(tmp_path), verbosity=0)
    calls = measured_runs(monkeypatch)
    assert measuring.measure_blocks(section, SITE) == 0
    assert calls == []


def test_sitemap_txt_is_served_when_only_the_worst_case_entries_would_not_fit(
    registry, monkeypatch
):
    """An unmeasured section's files are sized by their worst entries (an
    extension's largest children count there); a text line holds the
    location alone, so ``max_loc_length`` bounds ``/sitemap.txt`` lower."""
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 300_000)
    register(Located(max_loc_length=200))
    bulk_articles(1_000)
    response, text = fetch("/sitemap.txt")
    assert response.status_code == 200
    assert text.decode().split() == [f"{BASE}/articles/{i:08d}/" for i in range(1, 1_001)]
