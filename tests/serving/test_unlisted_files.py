"""A file that would list no URL is not listed: not in the index, the HTML
sitemap or a build, and it answers 404 (issue 25). Its section's
``location()`` fails for every item (a URL name the project lacks, a
``get_absolute_url()`` that raises); one failing item never hides a file."""

from __future__ import annotations

import logging

import pytest
from django.contrib.sitemaps import Sitemap
from django.core.files.storage import FileSystemStorage
from django.core.management import call_command
from django.test import Client

from django_sitemaps_plus import ModelSection, Section, protocol, register
from django_sitemaps_plus.build import build
from django_sitemaps_plus.checks import check_sections
from tests.testapp.models import Article
from tests.utils import articles, fetch, locs

pytestmark = pytest.mark.django_db

ERROR_LOGGER = "django_sitemaps_plus"


class MissingPages(Section):
    """The Quick start's static pages, in a project without those URL names."""

    name = "pages"

    def items(self):
        return ["pages:home", "pages:about"]


class SomeMissing(Section):
    name = "some"

    def items(self):
        return ["pages:home", "about", "/legal/"]


class RaisingArticles(ModelSection):
    """Every item's ``location()`` raises (not a ``NoReverseMatch``)."""

    name = "raising"
    model = Article

    def location(self, item):
        raise ValueError(f"no page for {item.slug}")


class RaisingSitemap(Sitemap):  # type: ignore[type-arg]
    def items(self):
        return ["a", "b"]

    def location(self, item):
        raise LookupError(item)


def index_locs() -> list[str]:
    response, body = fetch("/sitemap.xml")
    assert response.status_code == 200
    return locs(body)


def errors(caplog) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == ERROR_LOGGER and r.levelno == logging.ERROR
    ]


@pytest.mark.parametrize(
    ("section", "name"),
    [(MissingPages, "pages"), (RaisingArticles, "raising"), (RaisingSitemap, "raising")],
    ids=["url-names", "model-location-raises", "contrib-location-raises"],
)
def test_a_section_whose_every_location_fails_is_not_listed(registry, caplog, section, name):
    register(section, name=name)
    register(Article, name="articles")
    articles(2)
    with caplog.at_level(logging.WARNING, logger=ERROR_LOGGER):
        assert index_locs() == ["https://example.com/sitemap-articles-1.xml"]
    (error,) = errors(caplog)
    assert f"Sitemap section {name!r}" in error and "leaves the section out" in error
    # The file itself: a 404, not a 500 nor an empty urlset.
    assert Client().get(f"/sitemap-{name}-1.xml").status_code == 404
    assert Client().get(f"/sitemap-{name}-1.txt").status_code == 404
    _, text = fetch("/sitemap.txt")
    assert text.decode().split() == [f"https://example.com/articles/article-{i}/" for i in (0, 1)]


@pytest.mark.parametrize("cache", [False, True], ids=["uncached", "cached"])
def test_only_broken_sections_make_no_index(registry, settings, cache):
    settings.SITEMAPS_PLUS = {"CACHE": cache}
    register(MissingPages)
    for _ in range(2):  # cached: nothing stored is served on the second
        assert Client().get("/sitemap.xml").status_code == 404
        assert Client().get("/sitemap.txt").status_code == 404
        assert Client().get("/sitemap-pages-1.xml").status_code == 404


def test_under_asgi_the_index_leaves_a_broken_section_out(registry, settings):
    from tests.serving.test_asgi import asgi_get

    settings.SITEMAPS_PLUS = {"CACHE": True}
    register(MissingPages)
    register(SomeMissing)
    response, body = asgi_get("/sitemap.xml")
    assert response.status_code == 200
    assert locs(body) == ["https://example.com/sitemap-some-1.xml"]


def test_a_section_with_some_failing_items_keeps_its_file(registry, caplog):
    register(SomeMissing)
    with caplog.at_level(logging.WARNING, logger=ERROR_LOGGER):
        assert index_locs() == ["https://example.com/sitemap-some-1.xml"]
    assert errors(caplog) == []
    _, body = fetch("/sitemap-some-1.xml")
    assert locs(body) == ["https://example.com/about/", "https://example.com/legal/"]


def test_a_model_section_with_one_raising_item_keeps_its_file(registry, caplog):
    class OneRaises(ModelSection):
        name = "one"
        model = Article

        def location(self, item):
            if item.slug == "article-0":
                raise AttributeError("no category")
            return item.get_absolute_url()

    register(OneRaises)
    articles(2)
    with caplog.at_level(logging.WARNING, logger=ERROR_LOGGER):
        assert index_locs() == ["https://example.com/sitemap-one-1.xml"]
        # Before, the exception (not a NoReverseMatch) was the file's 500.
        _, body = fetch("/sitemap-one-1.xml")
    assert locs(body) == ["https://example.com/articles/article-1/"]
    assert errors(caplog) == []
    assert any("raised AttributeError" in r.getMessage() for r in caplog.records)


def test_a_file_whose_items_all_fail_is_left_out_and_the_others_listed(registry, caplog):
    # One item per file: file 1's items fail (the sample), so each file is read.
    register(SomeMissing, limit=1)
    with caplog.at_level(logging.WARNING, logger=ERROR_LOGGER):
        assert index_locs() == [
            "https://example.com/sitemap-some-2.xml",
            "https://example.com/sitemap-some-3.xml",
        ]
    (error,) = errors(caplog)
    assert "file 1 " in error and "leaves those files out" in error
    assert Client().get("/sitemap-some-1.xml").status_code == 404


def test_a_measured_section_whose_rows_all_fail_has_no_file(registry, caplog, monkeypatch):
    # Three worst-case entries exceed 30,000 bytes: the rows are measured,
    # and none renders.
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 30_000)
    register(RaisingArticles)
    register(Article, name="articles")
    articles(3)
    assert registry.get("raising").file_sizing() == "measure"
    with caplog.at_level(logging.WARNING, logger=ERROR_LOGGER):
        call_command("measure_sitemaps", verbosity=0)
        assert index_locs() == ["https://example.com/sitemap-articles-1.xml"]
    assert any("'raising'" in e and "leaves the section out" in e for e in errors(caplog))
    assert Client().get("/sitemap-raising-1.xml").status_code == 404


@pytest.mark.urls("tests.html_sitemap_urls")
def test_the_html_sitemap_does_not_link_a_broken_section(registry):
    register(MissingPages)
    register(Article, name="articles")
    articles(1)
    html = Client().get("/sitemap/").content.decode()
    assert 'href="/sitemap/articles/"' in html
    assert 'href="/sitemap/pages/"' not in html
    assert Client().get("/sitemap/pages/").status_code == 404


def test_build_writes_no_file_for_a_broken_section(registry, tmp_path):
    register(MissingPages)
    register(Article, name="articles")
    articles(1)
    build(FileSystemStorage(location=str(tmp_path)))
    assert not (tmp_path / "sitemap-pages-1.xml").exists()
    assert locs((tmp_path / "sitemap.xml").read_bytes()) == [
        "https://example.com/sitemap-articles-1.xml"
    ]


class TestW008:
    def warnings(self) -> list[str]:
        return [m.msg for m in check_sections() if m.id == "sitemaps_plus.W008"]

    def test_a_section_whose_sample_all_fails(self, registry):
        register(MissingPages)
        (message,) = self.warnings()
        assert "Sitemap section 'pages'" in message
        assert "'pages:home' (NoReverseMatch" in message and "'pages:about'" in message

    def test_a_contrib_sitemap_whose_sample_all_fails(self, registry):
        register(RaisingSitemap, name="raising")
        (message,) = self.warnings()
        assert "'a' (LookupError: a); 'b' (LookupError: b)" in message

    def test_quiet_for_a_healthy_section(self, registry):
        register(SomeMissing)  # one failing item among good ones

        @register
        class Healthy(Section):
            def items(self):
                return ["home", "about"]

        assert self.warnings() == []

    def test_quiet_for_an_empty_section(self, registry):
        @register
        class Empty(Section):
            def items(self):
                return []

        assert self.warnings() == []

    def test_items_from_a_query_are_not_sampled(self, registry, django_assert_num_queries):
        register(RaisingArticles)

        @register
        class Listed(Section):
            def items(self):
                return Article.objects.order_by("pk")

            def location(self, item):
                raise ValueError

        articles(2)
        with django_assert_num_queries(0):
            assert self.warnings() == []
