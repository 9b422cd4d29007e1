"""The include shadows nothing: routes exist only for what is switched on."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.shadow_urls")]

KEY = "0123456789abcdef"


def _get(path: str) -> tuple[int, str]:
    response = Client().get(path)
    return response.status_code, response.content.decode()


class TestRobotsTxt:
    def test_off_the_projects_own_is_served(self, settings):
        settings.SITEMAPS_PLUS = {}
        assert _get("/robots.txt") == (200, "the project's robots.txt")

    def test_on_ours_is_served(self, settings):
        settings.SITEMAPS_PLUS = {"ROBOTS_TXT": True}
        status, body = _get("/robots.txt")
        assert status == 200
        assert "Sitemap: " in body
        assert body.endswith("/sitemap.xml\n")

    def test_switched_per_request(self, settings):
        settings.SITEMAPS_PLUS = {"ROBOTS_TXT": True}
        assert "Sitemap: " in _get("/robots.txt")[1]
        settings.SITEMAPS_PLUS = {"ROBOTS_TXT": False}
        assert _get("/robots.txt")[1] == "the project's robots.txt"

    def test_reversible_whether_on_or_off(self, settings):
        settings.SITEMAPS_PLUS = {}
        assert reverse("sitemaps_plus:robots_txt") == "/robots.txt"


class TestIndexNowKeyFile:
    @pytest.mark.parametrize("name", ["security.txt", "humans.txt"])
    def test_other_text_files_reach_the_project(self, settings, name):
        settings.SITEMAPS_PLUS = {"INDEXNOW_KEY": "a-different-key-1234"}
        assert _get(f"/{name}") == (200, f"the project's {name}")

    def test_without_a_key_a_key_shaped_path_is_the_projects(self, settings):
        settings.SITEMAPS_PLUS = {}
        assert _get(f"/{KEY}.txt") == (200, "the project's key-like file")

    def test_the_configured_key_is_served_by_us(self, settings):
        settings.SITEMAPS_PLUS = {"INDEXNOW_KEY": KEY}
        response = Client().get(f"/{KEY}.txt")
        assert response.status_code == 200
        assert response.content.decode() == KEY
        assert response["Content-Type"].startswith("text/plain")

    def test_an_unknown_text_file_is_a_404(self, settings):
        settings.SITEMAPS_PLUS = {"INDEXNOW_KEY": KEY}
        assert Client().get("/not-configured-anywhere.txt").status_code == 404

    def test_reverse_gives_the_key_file(self, settings):
        settings.SITEMAPS_PLUS = {"INDEXNOW_KEY": KEY}
        assert reverse("sitemaps_plus:indexnow_key", kwargs={"key": KEY}) == f"/{KEY}.txt"
