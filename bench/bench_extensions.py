"""Extensions benchmark: a 50,000-URL page with 5 languages and 3 images per URL.

Beside django.contrib.sitemaps with ``i18n = True, alternates = True`` on the
same rows (contrib has no images, so the like-for-like comparison is ours with
alternates only; ours with alternates *and* images is measured too). On
SQLite (a file database under ``bench/results/``), in one run:

1. time: the median of ``--repeat`` requests after one warm-up, through
   Django's test client on the real views, consuming the streamed body;
2. memory: the tracemalloc peak of one request, for pages of 10,000, 25,000
   and 50,000 URLs (flat in page size: the body streams);
3. queries per request.

    python -m bench.bench_extensions                 # 10,000 rows x 5 languages
    python -m bench.bench_extensions --repeat 1      # quicker

Self-contained: it configures its own settings (this module is also the
URLconf) and uses the models of the extension tests (``tests.i18napp``:
``Gallery`` with ``Photo`` rows). Results are printed and written to
``bench/results/extensions.json``; docs/benchmarks-extensions.md quotes them.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français"), ("es", "Español"),
             ("it", "Italiano")]  # fmt: skip
IMAGES_PER_URL = 3
#: A short host, as before files were sized from their measured entries
#: (then 50,000 such entries fit a file only with short locations); kept so
#: runs compare. The sections use the default settings: files are measured.
BASE_URL = "https://ex.com"

urlpatterns: list[Any] = []


def configure(db_path: Path) -> None:
    import django
    from django.conf import settings

    settings.configure(
        SECRET_KEY="bench-only-not-secret",
        DEBUG=False,
        ALLOWED_HOSTS=["*"],
        USE_TZ=True,
        TIME_ZONE="UTC",
        USE_I18N=True,
        LANGUAGE_CODE="en",
        LANGUAGES=LANGUAGES,
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(db_path)}},
        INSTALLED_APPS=[
            "django.contrib.contenttypes",
            "django.contrib.sitemaps",
            "django_sitemaps_plus",
            "parler",
            "tests.i18napp",
        ],
        ROOT_URLCONF="bench.bench_extensions",
        MIDDLEWARE=[],
        TEMPLATES=[
            {"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}
        ],
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        MEDIA_URL="/m/",
        SITEMAPS_PLUS={"BASE_URL": BASE_URL, "CACHE": False, "AUTODISCOVER": False},
    )
    django.setup()


def build_urls() -> None:
    """This module's URLconf: language-prefixed pages, ours and contrib's sitemap."""
    from django.conf.urls.i18n import i18n_patterns
    from django.contrib.sitemaps import Sitemap
    from django.contrib.sitemaps import views as contrib_views
    from django.http import HttpResponse
    from django.urls import include, path

    from tests.i18napp.models import Gallery

    class ContribGalleries(Sitemap):  # type: ignore[type-arg]
        i18n = True
        alternates = True
        x_default = True
        limit = 50_000

        def items(self) -> Any:
            return Gallery.objects.order_by("pk")

    def page(request: Any, **kwargs: Any) -> HttpResponse:
        return HttpResponse("page")

    # ROOT_URLCONF imports this file as bench.bench_extensions (a module apart
    # from __main__ when run with -m): fill that module's list.
    import importlib

    patterns = importlib.import_module("bench.bench_extensions").urlpatterns
    patterns[:] = [
        path("", include("django_sitemaps_plus.urls")),
        path(
            "contrib.xml",
            contrib_views.sitemap,
            {"sitemaps": {"g": ContribGalleries}},
            name="contrib-sitemap",
        ),
        *i18n_patterns(path("g/<slug:slug>/", page, name="gallery")),
    ]


def register(limit: int) -> None:
    from django_sitemaps_plus import ModelSection
    from django_sitemaps_plus.extensions import Hreflang, Images
    from django_sitemaps_plus.registry import site
    from tests.i18napp.models import Gallery

    site._registry.clear()
    common = {
        "url_name": "gallery",
        "url_kwargs": {"slug": "slug"},
        "limit": limit,
    }
    site.add(ModelSection(Gallery, name="alternates", extensions=[Hreflang()], **common))
    site.add(
        ModelSection(
            Gallery,
            name="alternates-images",
            extensions=[Hreflang(), Images("photos__file", max_per_url=IMAGES_PER_URL)],
            **common,
        )
    )


def seed(rows: int) -> None:
    from django.core.management import call_command

    from tests.i18napp.models import Gallery, Photo

    call_command("migrate", verbosity=0)
    if Gallery.objects.count() == rows and Photo.objects.count() == rows * IMAGES_PER_URL:
        return
    Photo.objects.all().delete()
    Gallery.objects.all().delete()
    Gallery.objects.bulk_create(
        [Gallery(id=i, slug=f"{i:05d}") for i in range(1, rows + 1)], batch_size=5_000
    )
    Photo.objects.bulk_create(
        [
            Photo(gallery_id=i, file=f"{i:05d}{chr(97 + n)}.jpg")
            for i in range(1, rows + 1)
            for n in range(IMAGES_PER_URL)
        ],
        batch_size=5_000,
    )


# Measuring ------------------------------------------------------------------------


def get(path: str) -> tuple[int, int]:
    """GET ``path`` through the test client: (status, body bytes)."""
    from django.test import Client

    response = Client().get(path)
    if getattr(response, "streaming", False):
        size = sum(len(chunk) for chunk in response.streaming_content)
    else:
        size = len(response.content)
    return response.status_code, size


def timed(path: str, repeat: int) -> dict[str, Any]:
    from django.db import connection

    queries: list[str] = []

    def count(execute: Any, sql: str, *args: Any) -> Any:
        queries.append(sql)
        return execute(sql, *args)

    with connection.execute_wrapper(count):
        status, size = get(path)  # warm-up
    assert status == 200, (path, status)
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        get(path)
        times.append(time.perf_counter() - start)
    return {"seconds": statistics.median(times), "bytes": size, "queries": len(queries)}


def peak_memory(call: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def count_urls(path: str) -> int:
    from django.test import Client

    response = Client().get(path)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return body.count(b"<url>")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000, help="rows (x5 languages = URLs)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    RESULTS_DIR.mkdir(exist_ok=True)
    configure(RESULTS_DIR / f"extensions-{args.rows}.sqlite3")
    build_urls()
    seed(args.rows)
    urls_per_page = args.rows * len(LANGUAGES)
    register(urls_per_page)

    from django_sitemaps_plus.registry import site
    from django_sitemaps_plus.sites import site_context

    # The index lays each section out (measuring its entries; the layout is
    # kept in the cache, as in any deployment): one file each.
    for name in ("alternates", "alternates-images"):
        section = site.get(name)
        assert section is not None
        pages = section.index_pages(site_context())
        assert len(pages) == 1, f"{name}: {len(pages)} files for {urls_per_page:,} URLs"

    cases = {
        "contrib (i18n, alternates)": "/contrib.xml",
        "ours (hreflang)": "/sitemap-alternates-1.xml",
        "ours (hreflang + 3 images)": "/sitemap-alternates-images-1.xml",
    }
    results: dict[str, Any] = {"rows": args.rows, "urls_per_page": urls_per_page}
    for label, path in cases.items():
        assert count_urls(path) == urls_per_page, label
        results[label] = timed(path, args.repeat)
        results[label]["peak_bytes"] = peak_memory(lambda path=path: get(path))
        print(
            f"{label:32} {results[label]['seconds']:8.3f} s  "
            f"{results[label]['bytes'] / 1e6:7.1f} MB body  "
            f"peak {results[label]['peak_bytes'] / 1e6:7.1f} MB  "
            f"{results[label]['queries']} queries",
            flush=True,
        )
    contrib = results["contrib (i18n, alternates)"]["seconds"]
    results["speedup_alternates"] = contrib / results["ours (hreflang)"]["seconds"]
    results["speedup_with_images"] = contrib / results["ours (hreflang + 3 images)"]["seconds"]
    print(f"speed-up, alternates only: {results['speedup_alternates']:.1f}x")
    print(f"speed-up, ours with images too: {results['speedup_with_images']:.1f}x")

    # Memory in page size: the same section at 10,000, 25,000, 50,000 URLs.
    flat: dict[int, int] = {}
    for page_urls in (10_000, 25_000, 50_000):
        if page_urls > urls_per_page:
            continue
        register(page_urls)
        get("/sitemap-alternates-images-1.xml")
        flat[page_urls] = peak_memory(lambda: get("/sitemap-alternates-images-1.xml"))
        print(f"peak memory, {page_urls:>6,}-URL page: {flat[page_urls] / 1e6:6.1f} MB")
    results["peak_by_page_urls"] = flat
    results["python"] = sys.version.split()[0]
    results["machine"] = platform.platform()
    import django

    results["django"] = django.get_version()
    out = RESULTS_DIR / "extensions.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
