from __future__ import annotations

import pytest
from django.contrib.sitemaps import Sitemap

from django_sitemaps_plus import ContribSection, ModelSection, Section, register, site
from django_sitemaps_plus.registry import AlreadyRegistered, NotRegistered
from tests.testapp.models import Article, Event


def test_register_model_with_options(registry):
    result = register(Article, lastmod_fields=["updated_at"], limit=10)
    section = site.get("articles")
    assert isinstance(section, ModelSection)
    assert section.model is Article
    assert list(section.lastmod_fields) == ["updated_at"]
    assert section.get_limit() == 10
    assert callable(result)


def test_decorator_replaces_the_default_registration_keeping_order(registry):
    register(Event)

    @register(Article)
    class ArticleSection(ModelSection):
        name = "news"
        lastmod_fields = ["updated_at"]

    assert [s.get_name() for s in site] == ["events", "news"]
    assert isinstance(site.get("news"), ArticleSection)
    assert "articles" not in site


def test_same_model_twice_needs_a_name(registry):
    register(Article)
    with pytest.raises(AlreadyRegistered, match="pass name="):
        register(Article)
    register(Article, name="articles-fast")
    assert len(site) == 2


def test_duplicate_section_name(registry):
    register(Article, name="x")
    with pytest.raises(AlreadyRegistered, match="'x'"):
        register(Event, name="x")


def test_plain_section_by_decorator_and_call(registry):
    @register
    class PagesSection(Section):
        def items(self):
            return ["home"]

    class Other(Section):
        name = "other"

    assert register(Other) is Other
    assert [s.get_name() for s in site] == ["pages", "other"]


def test_contrib_sitemap_class_and_instance(registry):
    class BlogSitemap(Sitemap):
        def items(self):
            return []

    register(BlogSitemap)
    register(BlogSitemap(), name="blog-2")
    assert isinstance(site.get("blog"), ContribSection)
    assert isinstance(site.get("blog-2"), ContribSection)


def test_unknown_option_is_a_type_error(registry):
    with pytest.raises(TypeError, match="no option 'lastmod_feilds'"):
        register(Article, lastmod_feilds=["updated_at"])


def test_registering_something_else_is_a_type_error(registry):
    with pytest.raises(TypeError, match="Cannot register"):
        register(42)


def test_model_section_without_model_needs_the_model_decorator(registry):
    class Orphan(ModelSection):
        pass

    with pytest.raises(TypeError, match=r"@register\(Model\)"):
        register(Orphan)


def test_unregister_by_name_and_model(registry):
    register(Article)
    register(Event)
    site.unregister("articles")
    site.unregister(Event)
    assert len(site) == 0
    with pytest.raises(NotRegistered):
        site.unregister("articles")


def test_autodiscover_imports_each_apps_sitemaps_module(registry, tmp_path, monkeypatch, settings):
    import sys

    from django_sitemaps_plus.registry import autodiscover

    # A real installed app with a sitemaps.py, and one without (tests.testapp).
    package = tmp_path / "discovered_app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sitemaps.py").write_text(
        "from django_sitemaps_plus import Section, register\n\n\n"
        "@register\n"
        "class DiscoveredSection(Section):\n"
        "    def items(self):\n"
        "        return ['/found/']\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("discovered_app", "discovered_app.sitemaps"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, "discovered_app"]
    # Installing the app ran the app's ready() (autodiscovery): start again.
    site._registry.clear()
    sys.modules.pop("discovered_app.sitemaps", None)
    autodiscover()
    assert [s.get_name() for s in site] == ["discovered"]


def test_simple_app_config_does_not_autodiscover(registry, monkeypatch):
    from django.apps import apps

    from django_sitemaps_plus import apps as app_module

    calls: list[str] = []
    monkeypatch.setattr("django_sitemaps_plus.registry.autodiscover", lambda: calls.append("x"))
    module = apps.get_app_config("django_sitemaps_plus").module
    app_module.SimpleSitemapsPlusConfig("django_sitemaps_plus", module).ready()
    assert calls == []
    app_module.SitemapsPlusConfig("django_sitemaps_plus", module).ready()
    assert calls == ["x"]


@pytest.mark.django_db
@pytest.mark.parametrize(("autodiscover", "status"), [(True, 200), (False, 404)])
def test_autodiscover_setting(registry, monkeypatch, settings, autodiscover, status):
    from django.apps import apps
    from django.test import Client

    from django_sitemaps_plus import Section
    from django_sitemaps_plus import apps as app_module

    class FoundSection(Section):
        name = "found"

        def items(self):
            return ["home"]

    # An app's sitemaps.py, as autodiscovery would import it.
    monkeypatch.setattr(
        "django_sitemaps_plus.registry.autodiscover", lambda: register(FoundSection)
    )
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "AUTODISCOVER": autodiscover}
    module = apps.get_app_config("django_sitemaps_plus").module
    app_module.SitemapsPlusConfig("django_sitemaps_plus", module).ready()
    assert Client().get("/sitemap.xml").status_code == status
