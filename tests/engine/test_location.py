from __future__ import annotations

import pytest
from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus.engine.location import LocationTemplate, absolute_location
from django_sitemaps_plus.sites import SiteContext

SITE = SiteContext("https://example.com")


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/a/b/", "https://example.com/a/b/"),
        ("/über/", "https://example.com/%C3%BCber/"),
        ("https://example.com/x?q=1", "https://example.com/x?q=1"),
        ("https://EXAMPLE.com/x", "https://EXAMPLE.com/x"),
    ],
)
def test_absolute_location_accepts(location, expected):
    assert absolute_location(location, SITE) == (expected, None)


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("", "empty"),
        ("a/b", "relative"),
        ("//cdn.example.com/a", "relative"),
        ("http://example.com/a", "another scheme or host"),
        ("https://example.org/a", "another scheme or host"),
        ("/" + "x" * 2100, "longer than 2,048"),
    ],
)
def test_absolute_location_refuses(location, why):
    url, problem = absolute_location(location, SITE)
    assert url is None and problem is not None and why in problem


@pytest.mark.parametrize(
    ("url_name", "kwargs", "values"),
    [
        ("article", {"slug": "slug"}, ["hello-world"]),
        ("article", {"slug": "slug"}, ["über café"]),
        ("article", {"slug": "slug"}, ["a&b'c"]),
        ("numbered", {"number": "n"}, [42]),
        ("two-kwargs", {"first": "a", "second": "b"}, ["x-y", 7]),
        ("blog:entry", {"slug": "slug"}, ["hello"]),
    ],
)
def test_template_gives_what_reverse_gives(url_name, kwargs, values):
    from django.utils.encoding import iri_to_uri

    template = LocationTemplate(url_name, kwargs)
    assert template.fast
    expected = iri_to_uri(reverse(url_name, kwargs=dict(zip(kwargs, values))))
    assert template.path(values) == expected


def test_template_values_the_pattern_refuses_raise_like_reverse():
    template = LocationTemplate("numbered", {"number": "n"})
    with pytest.raises(NoReverseMatch):
        template.path(["not-a-number"])
    slug = LocationTemplate("article", {"slug": "slug"})
    with pytest.raises(NoReverseMatch):
        slug.path(["has/slash"])


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("https://example.com", "https://example.com"),
        ("https://bücher.example", "https://xn--bcher-kva.example"),
        ("http://bücher.example:8000", "http://xn--bcher-kva.example:8000"),
    ],
)
def test_internationalised_hosts_become_ascii(base, expected, settings):
    from django_sitemaps_plus.sites import site_context

    settings.SITEMAPS_PLUS = {"BASE_URL": base}
    assert site_context().base_url == expected


@pytest.mark.parametrize(
    ("url_name", "kwargs", "values"),
    [
        ("padded", {"number": "n"}, [7]),
        ("lowercase", {"slug": "slug"}, ["ABC"]),
        ("regex-lowercase", {"slug": "slug"}, ["abc"]),
    ],
    ids=["padding-converter", "lowercasing-converter", "re_path"],
)
def test_template_of_a_custom_converter_or_re_path_is_reverse(url_name, kwargs, values):
    from django.utils.encoding import iri_to_uri

    template = LocationTemplate(url_name, kwargs)
    assert not template.fast
    assert template.paths([(1, *values)], 1) is None
    assert template.path(values) == iri_to_uri(reverse(url_name, kwargs=dict(zip(kwargs, values))))


def test_template_of_re_path_refuses_what_reverse_refuses():
    template = LocationTemplate("regex-lowercase", {"slug": "slug"})
    with pytest.raises(NoReverseMatch):
        reverse("regex-lowercase", kwargs={"slug": "ABC"})
    with pytest.raises(NoReverseMatch):
        template.path(["ABC"])


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url_name", "expected"),
    [
        ("padded", ["/padded/000001/", "/padded/000002/"]),
        ("lowercase", ["/lower/mixed-case/", "/lower/upper/"]),
        # "Mixed-Case" does not reverse (the group is lowercase): dropped.
        ("regex-lowercase", ["/low/upper/"]),
    ],
    ids=["padding-converter", "lowercasing-converter", "re_path"],
)
def test_sitemap_of_a_custom_converter_or_re_path_lists_what_reverse_gives(
    registry, url_name, expected
):
    from django_sitemaps_plus import register
    from tests.testapp.models import Article
    from tests.utils import fetch, locs

    kwarg = "number" if url_name == "padded" else "slug"
    field = "pk" if url_name == "padded" else "slug"

    register(Article, url_name=url_name, url_kwargs={kwarg: field})
    Article.objects.bulk_create(
        [Article(pk=1, title="a", slug="Mixed-Case"), Article(pk=2, title="b", slug="UPPER")]
    )
    if url_name == "regex-lowercase":
        Article.objects.filter(pk=2).update(slug="upper")
    response, body = fetch("/sitemap-articles-1.xml")
    assert response.status_code == 200
    assert locs(body) == ["https://example.com" + p for p in expected]
