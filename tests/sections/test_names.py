"""Section and file names: one rule, used by the registry, the URLs and the build."""

from __future__ import annotations

import pytest
from django.urls import reverse

from django_sitemaps_plus import ModelSection, Section, names, urls
from django_sitemaps_plus.contrib.django_sitemaps import ContribSection
from django_sitemaps_plus.registry import SECTION_NAME_RE
from tests.testapp.models import Article


def test_file_names_are_what_the_urls_serve():
    assert names.file_name("blog-posts", 12) == "sitemap-blog-posts-12.xml"
    assert names.file_name("blog-posts", 12, "txt") == "sitemap-blog-posts-12.txt"
    path = reverse("sitemaps_plus:section", kwargs={"section": "blog-posts", "page": 12})
    assert path == "/" + names.file_name("blog-posts", 12)


@pytest.mark.parametrize("name", ["pages", "blog-posts", "a_b-2", "x"])
def test_the_file_name_pattern_reads_back_a_file_name(name):
    match = names.FILE_NAME_RE.fullmatch(names.file_name(name, 3, "txt"))
    assert match is not None
    assert (match["section"], match["page"], match["ext"]) == (name, "3", "txt")


def test_the_registry_and_the_url_converter_share_the_rule():
    assert SECTION_NAME_RE is names.SECTION_NAME_RE
    assert urls.SectionConverter.regex.startswith(names.SECTION_NAME_PATTERN)


def test_default_names_follow_the_rule():
    from django.contrib.sitemaps import Sitemap

    class BlogPostsSection(Section):
        pass

    class ÜberSection(Section):
        pass

    class NewsSitemap(Sitemap):  # type: ignore[type-arg]
        pass

    assert BlogPostsSection().get_name() == "blogposts"
    assert ÜberSection().get_name() == "uber"
    assert ModelSection(Article).get_name() == "articles"
    assert ContribSection(NewsSitemap).get_name() == "news"
    for name in ("blogposts", "uber", "articles", "news"):
        assert names.SECTION_NAME_RE.fullmatch(name)
