"""The example project: its checks pass, seed_demo seeds, and its sitemap lists the demo data.

The example has its own settings module, which cannot share a process with
tests.settings, so each step runs the example's code in a subprocess, on a
SQLite file of its own whatever DATABASE_URL the suite runs with.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

# Subprocesses: run by .ci/run and ./tests/run --all, skipped by ./tests/run.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "example_project"
BASE_URL = "https://demo.example"

# Fetches every sitemap file through the test client and reports what the
# database says should be in them.
PROBE = """
import json, os, re
import django
django.setup()
from django.test import Client
from blog.models import Article
from shop.models import Product

def body(response):
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()

client = Client(HTTP_HOST="127.0.0.1")
index = client.get("/sitemap.xml")
index_body = body(index)
files = re.findall(r"<loc>([^<]+)</loc>", index_body)
locations = []
statuses = {"/sitemap.xml": index.status_code}
for url in files:
    path = url.removeprefix(os.environ["SITEMAPS_BASE_URL"])
    response = client.get(path)
    statuses[path] = response.status_code
    # The news file lists recent articles a second time (Google News), or the
    # blog's front page while none is recent: not counted with the rest.
    if "/sitemap-news-" not in path:
        locations += re.findall(r"<loc>([^<]+)</loc>", body(response))
print(json.dumps({
    "index_content_type": index["Content-Type"],
    "files": files,
    "statuses": statuses,
    "locations": locations,
    "published_articles": Article.objects.filter(is_published=True).count(),
    "drafts": list(Article.objects.filter(is_published=False).values_list("slug", flat=True)),
    "active_products": Product.objects.filter(is_active=True).count(),
    "detail_status": client.get(Article.objects.filter(is_published=True)
                                .first().get_absolute_url()).status_code,
}))
"""


def _env(database: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        # Replaces tests.settings, which pytest-django exported.
        DJANGO_SETTINGS_MODULE="example_project.settings",
        DATABASE_URL=f"sqlite:///{database}",
        # The drawn product images: beside the database, not in the checkout.
        MEDIA_ROOT=str(database.parent / "media"),
        CACHE_URL="locmemcache://",
        DEBUG="false",
        SITEMAPS_BASE_URL=BASE_URL,
        # The package itself, when the checkout is not installed.
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    return env


def _run(database: Path, *args: str, **env: str) -> str:
    result = subprocess.run(
        [sys.executable, *args],
        cwd=EXAMPLE,
        env={**_env(database), **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("example") / "db.sqlite3"
    _run(path, "manage.py", "migrate", "--noinput", "--verbosity", "0")
    _run(
        path,
        "manage.py",
        "seed_demo",
        "--articles",
        "120",
        "--products",
        "40",
        "--comments-per-article",
        "2",
        "--images-per-product",
        "1",
    )
    return path


class TestExampleProject:
    def test_system_checks_pass(self, database: Path) -> None:
        out = _run(database, "manage.py", "check", "--fail-level", "WARNING")
        assert "no issues" in out

    def test_the_sitemaps_validate_without_findings(self, database: Path) -> None:
        # What ./example_project/run prints after seeding: every file of the
        # site (the index, each section's XML and text files, /sitemap.txt).
        out = _run(database, "manage.py", "validate_sitemaps", ALLOWED_HOSTS="demo.example")
        assert "/sitemap.txt (text," in out
        assert out.strip().splitlines()[-1] == "0 errors, 0 warnings, 0 info", out[-3000:]

    def test_seed_demo_does_not_double(self, database: Path) -> None:
        out = _run(database, "manage.py", "seed_demo", "--articles", "5")
        assert "already present (120 articles, 40 products)" in out

    def test_sitemap_lists_published_rows_and_pages(self, database: Path) -> None:
        report: dict[str, Any] = json.loads(_run(database, "-c", PROBE))

        assert report["index_content_type"].startswith("application/xml")
        assert set(report["statuses"].values()) == {200}, report["statuses"]
        locations: list[str] = report["locations"]
        assert len(locations) == len(set(locations))
        articles = [loc for loc in locations if loc.startswith(f"{BASE_URL}/blog/")]
        products = [loc for loc in locations if loc.startswith(f"{BASE_URL}/shop/")]
        assert len(articles) == report["published_articles"]
        assert len(products) == report["active_products"]
        assert {f"{BASE_URL}/", f"{BASE_URL}/about/", f"{BASE_URL}/contact/"} <= set(locations)
        # Non-ASCII slugs are listed as percent-encoded URIs.
        assert f"{BASE_URL}/blog/%C3%BCber-uns/" in locations
        assert f"{BASE_URL}/shop/caf%C3%A9-cr%C3%A8me/" in locations
        assert not any(f"/blog/{slug}/" in loc for slug in report["drafts"] for loc in articles)
        assert report["drafts"], "the demo data should include drafts"
        assert report["detail_status"] == 200

    def test_flush_replaces_the_data(self, tmp_path: Path) -> None:
        path = tmp_path / "db.sqlite3"
        _run(path, "manage.py", "migrate", "--noinput", "--verbosity", "0")
        args = ["manage.py", "seed_demo", "--articles", "30", "--products", "10"]
        _run(path, *args)
        out = _run(path, *args, "--flush")
        assert "Flushed the demo tables." in out
        assert "Seeded 30 articles and 10 products" in out


# Every image URL of the product files, fetched from the example site itself.
IMAGES_PROBE = """
import json, os
import django
django.setup()
from django.test import Client
from lxml import etree

def body(response):
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content

ns = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
      "image": "http://www.google.com/schemas/sitemap-image/1.1"}
client = Client(HTTP_HOST="127.0.0.1")
base = os.environ["SITEMAPS_BASE_URL"]
index = etree.fromstring(body(client.get("/sitemap.xml")))
images = []
for loc in index.iterfind("sm:sitemap/sm:loc", ns):
    if "/sitemap-products-" in loc.text:
        urlset = etree.fromstring(body(client.get(loc.text.removeprefix(base))))
        images += [image.text for image in urlset.iterfind(".//image:image/image:loc", ns)]
answers = {}
for url in sorted(set(images)):
    response = client.get(url.removeprefix(base))
    answers[url] = [response.status_code, response.get("Content-Type"), body(response)[:8].hex()]
print(json.dumps({"images": len(images), "answers": answers}))
"""


class TestDemoImages:
    def test_every_image_url_in_the_sitemap_is_served(self, database: Path) -> None:
        report: dict[str, Any] = json.loads(_run(database, "-c", IMAGES_PROBE))
        answers = report["answers"]
        # 40 products, 0 to 2 images each: some listed, from the drawn handful.
        assert report["images"] >= 20
        assert 2 <= len(answers) <= 10
        png = "89504e470d0a1a0a"
        for url, answer in answers.items():
            assert url.startswith(f"{BASE_URL}/media/products/demo-")
            assert answer == [200, "image/png", png], url


class TestDemoExtras:
    PROBE = textwrap.dedent(
        """
        import json
        import django
        django.setup()
        from django.contrib.auth import get_user_model
        from django.test import Client
        from lxml import etree

        client = Client(HTTP_HOST="127.0.0.1")
        robots = client.get("/robots.txt")
        html_index = client.get("/sitemap/")
        html_articles = client.get("/sitemap/articles/")
        home = client.get("/")
        news = client.get("/sitemap-news-1.xml")
        body = b"".join(news.streaming_content) if news.streaming else news.content
        news_ns = {"news": "http://www.google.com/schemas/sitemap-news/0.9"}
        staff = Client(HTTP_HOST="127.0.0.1")
        staff.force_login(get_user_model().objects.get(username="demo"))
        overview = staff.get("/admin/django_sitemaps_plus/sitemapoverview/")
        print(json.dumps({
            "overview": [overview.status_code, overview.content.decode()],
            "robots": robots.content.decode(),
            "html_index": [html_index.status_code, html_index.content.decode()],
            "html_articles": [html_articles.status_code, html_articles.content.decode()],
            "home": home.content.decode(),
            "news_status": news.status_code,
            "news_entries": len(etree.fromstring(body).findall(".//news:news", news_ns))
            if news.status_code == 200 else 0,
            "superuser": get_user_model().objects.filter(
                username="demo", is_superuser=True
            ).exists(),
        }))
        """
    )

    def test_robots_news_and_the_demo_superuser(self, database: Path) -> None:
        report = json.loads(_run(database, "-c", self.PROBE))
        assert f"Sitemap: {BASE_URL}/sitemap.xml" in report["robots"]
        # Seeded articles in the last two days: the news file is never empty.
        assert report["news_status"] == 200
        assert report["news_entries"] >= 5
        assert report["superuser"]

    def test_the_admin_overview_shows_it_all(self, database: Path) -> None:
        report = json.loads(_run(database, "-c", self.PROBE))
        status, html = report["overview"]
        assert status == 200
        for section in ("articles", "news", "pages", "products"):
            assert f'data-name="{section}"' in html
        assert 'class="lastmod-plot"' in html
        assert 'id="indexnow-queued"' in html  # IndexNow is on in the demo
        assert 'id="validate"' in html

    def test_the_html_sitemap(self, database: Path) -> None:
        report = json.loads(_run(database, "-c", self.PROBE))
        status, html = report["html_index"]
        assert status == 200
        # In the example's base template, which links to it.
        assert '<a href="/sitemap/">Sitemap</a>' in html
        for section in ("articles", "news", "pages"):
            assert f'<a href="/sitemap/{section}/">{section}</a>' in html
        status, html = report["html_articles"]
        assert status == 200
        assert f'<a href="{BASE_URL}/blog/' in html
        assert re.search(r"URLs 1 to \d+ of \d+", html)
        # The home page embeds the list of sections with the template tag.
        assert '<a href="/sitemap/articles/">articles</a>' in report["home"]
