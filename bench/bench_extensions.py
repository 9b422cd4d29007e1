"""Extensions benchmark: 50,000 URLs with 5 languages and 3 images per URL.

Beside django.contrib.sitemaps with ``i18n = True, alternates = True`` on the
same rows (contrib has no images, so the like-for-like comparison is ours with
alternates only; ours with alternates *and* images is measured too). On
SQLite (a file database under ``bench/results/``), with the package's default
settings (``CACHE`` on, the local-memory cache Django defaults to), in one run:

1. layout: each section as the index lays it out before ``measure_sitemaps``
   (files sized by the worst case) and after it (files sized by the measured
   bytes); the command is timed too, off the request path as in a deployment;
2. time: every file of each section, each request a **cold render** (the
   file's cached entry dropped before it, untimed: see ``drop_file_entries``),
   through Django's test client on the real views, consuming the body; the
   median of ``--repeat`` rounds after one warm-up round, wall and CPU time,
   compared **per URL** with contrib's one file;
3. memory: the tracemalloc peak of one cold request for file 1, and for
   files of 10,000, 25,000 and 50,000 URLs (cold with the defaults, and
   streamed with ``CACHE`` off);
4. queries per file.

    python -m bench.bench_extensions                 # 10,000 rows x 5 languages
    python -m bench.bench_extensions --repeat 1      # quicker

Self-contained: it configures its own settings (this module is also the
URLconf) and uses the models of the extension tests (``tests.i18napp``:
``Gallery`` with ``Photo`` rows). Results are printed and written to
``bench/results/extensions.json`` (``--json``); docs/benchmarks-extensions.md
quotes them.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
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
#: A short host, as in earlier runs, so they compare. The sections are sized
#: by measure (extensions): worst-case files until measured.
BASE_URL = "https://ex.com"
#: Sizes of the memory-flatness files (those above the run's URLs are skipped).
FLAT_PAGE_URLS = (10_000, 25_000, 50_000)

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
        # The defaults otherwise: CACHE on, CACHE_ALIAS "default" (no CACHES
        # given: Django's local-memory cache), GZIP on. No sitemaps.py to find.
        SITEMAPS_PLUS={"BASE_URL": BASE_URL, "AUTODISCOVER": False},
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
    """GET ``path`` through the test client: (status, body bytes), the
    streamed body consumed chunk by chunk (never held whole)."""
    from django.test import Client

    response = Client().get(path)
    if getattr(response, "streaming", False):
        size = sum(len(chunk) for chunk in response.streaming_content)
    else:
        size = len(response.content)
    return response.status_code, size


def body_of(path: str) -> tuple[int, bytes]:
    """GET ``path``: (status, the whole body), for the checks (untimed)."""
    from django.test import Client

    response = Client().get(path)
    if getattr(response, "streaming", False):
        return response.status_code, b"".join(response.streaming_content)
    return response.status_code, response.content


def drop_file_entries() -> int:
    """Drop the rendered files from the sitemap cache, so the next file
    request renders (a cold file, as after ``CACHE_TIMEOUT``): the metadata
    (``sitemaps_plus:f:``) and gzip bodies (``sitemaps_plus:b:``) of every
    file. Everything else stays: version tokens, kept block figures, the
    measured blocks and the layouts, so the request costs what a cold file
    costs in a deployment that measured. Read from the local-memory cache's
    own dict (bench only: it has no key listing). The number of keys dropped."""
    from django.core.cache import caches

    from django_sitemaps_plus.conf import conf

    cache: Any = caches[conf.CACHE_ALIAS]
    prefixes = tuple(cache.make_key(f"sitemaps_plus:{kind}:") for kind in "fb")
    with cache._lock:
        dropped = [key for key in cache._cache if key.startswith(prefixes)]
        for key in dropped:
            del cache._cache[key]
            cache._expire_info.pop(key, None)
    return len(dropped)


def layout(name: str) -> list[tuple[str, int]]:
    """The section's files as its index lays them out now: (path, URLs)."""
    from django_sitemaps_plus.registry import site
    from django_sitemaps_plus.sites import site_context

    section = site.get(name)
    assert section is not None
    pages = section.index_pages(site_context())
    return [(f"/sitemap-{name}-{page.number}.xml", page.url_count) for page in pages]


def checked(files: list[tuple[str, int]]) -> dict[str, Any]:
    """Each file requested cold, then again from the cache: the URLs it
    holds are the ones its layout counts, and the hit's body is the cold
    render's byte for byte. Its URLs and bytes in all."""
    urls = size = 0
    for path, expected in files:
        drop_file_entries()
        status, body = body_of(path)
        assert status == 200, (path, status)
        assert body.count(b"<url>") == expected, (path, body.count(b"<url>"), expected)
        assert body_of(path)[1] == body, f"{path}: the cached file differs from its render"
        urls += expected
        size += len(body)
    return {"files": len(files), "urls": urls, "bytes": size}


def timed(paths: list[str], repeat: int, *, cold: bool) -> dict[str, Any]:
    """Every file of ``paths`` requested in turn (``cold``: each a render,
    its cached entry dropped before it, untimed): the median of ``repeat``
    rounds after a warm-up round, wall and CPU seconds, and the queries of
    the warm-up round."""
    from django.db import connection

    queries: list[str] = []

    def count(execute: Any, sql: str, *args: Any) -> Any:
        queries.append(sql)
        return execute(sql, *args)

    def one_round() -> tuple[float, float]:
        wall = cpu = 0.0
        gc.collect()
        for path in paths:
            if cold:
                assert drop_file_entries() > 0 or path == paths[0], path
            start, start_cpu = time.perf_counter(), time.process_time()
            status, _ = get(path)
            wall += time.perf_counter() - start
            cpu += time.process_time() - start_cpu
            assert status == 200, (path, status)
        return wall, cpu

    with connection.execute_wrapper(count):
        one_round()
    rounds = [one_round() for _ in range(repeat)]
    return {
        "seconds": statistics.median(wall for wall, _ in rounds),
        "cpu_seconds": statistics.median(cpu for _, cpu in rounds),
        "rounds": [[round(wall, 4), round(cpu, 4)] for wall, cpu in rounds],
        "queries": len(queries),
    }


def peak_memory(call: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def cold_peak(path: str) -> int:
    """The allocation peak of one cold request for ``path``."""
    drop_file_entries()
    return peak_memory(lambda: get(path))


def measure_sitemaps() -> dict[str, Any]:
    """``manage.py measure_sitemaps``, as a deployment runs it: its output
    and wall and CPU seconds."""
    import io

    from django.core.management import call_command

    out = io.StringIO()
    start, start_cpu = time.perf_counter(), time.process_time()
    call_command("measure_sitemaps", stdout=out)
    return {
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - start_cpu,
        "output": out.getvalue().strip().splitlines(),
    }


def per_url(case: dict[str, Any]) -> None:
    """Add the per-URL figures (microseconds) and per 50,000 URLs (seconds)."""
    for key in ("seconds", "cpu_seconds"):
        case[f"{key}_per_50000_urls"] = case[key] / case["urls"] * 50_000
    case["us_per_url"] = case["seconds"] / case["urls"] * 1e6
    case["cpu_us_per_url"] = case["cpu_seconds"] / case["urls"] * 1e6


def print_case(label: str, case: dict[str, Any]) -> None:
    print(
        f"{label:44} {case['files']:4} files {case['urls']:7,} URLs  "
        f"{case['seconds']:7.3f} s ({case['cpu_seconds']:7.3f} s CPU)  "
        f"{case['us_per_url']:6.2f} us/URL ({case['cpu_us_per_url']:6.2f} CPU)  "
        f"{case['bytes'] / 1e6:6.1f} MB  peak {case['peak_bytes'] / 1e6:6.1f} MB  "
        f"{case['queries']} queries",
        flush=True,
    )


SECTIONS = {"alternates": "ours (hreflang)", "alternates-images": "ours (hreflang + 3 images)"}


def flat_memory(rows: int, flat_sizes: tuple[int, ...]) -> dict[int, dict[str, int]]:
    """Memory in file size: file 1 of the images section with ``limit`` at
    each size, measured (``measure_sitemaps``) so that it holds that many
    URLs: one cold request with the defaults (the render is compressed and
    stored: its gzip body is held), and one with ``CACHE`` off (the body
    streams). The measured blocks are kept with ``CACHE`` off too (they
    live in ``CACHE_ALIAS`` whatever ``CACHE`` says; docs/pagination.md)."""
    from django.conf import settings

    path = "/sitemap-alternates-images-1.xml"
    flat: dict[int, dict[str, int]] = {}
    for page_urls in flat_sizes:
        if page_urls > rows * len(LANGUAGES):
            continue
        register(page_urls)
        measure_sitemaps()
        files = layout("alternates-images")
        assert files[0][1] == page_urls, (page_urls, files[0])
        get(path)
        flat[page_urls] = {"cold_cache_on": cold_peak(path)}
        settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "CACHE": False}
        try:
            assert layout("alternates-images")[0][1] == page_urls, "CACHE off: not measured"
            get(path)
            flat[page_urls]["streamed_cache_off"] = peak_memory(lambda: get(path))
        finally:
            settings.SITEMAPS_PLUS = {
                k: v for k, v in settings.SITEMAPS_PLUS.items() if k != "CACHE"
            }
        print(
            f"peak memory, {page_urls:>6,}-URL file: "
            f"{flat[page_urls]['cold_cache_on'] / 1e6:6.1f} MB cold (defaults), "
            f"{flat[page_urls]['streamed_cache_off'] / 1e6:6.1f} MB streamed (CACHE off)",
            flush=True,
        )
    return flat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000, help="rows (x5 languages = URLs)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db", type=Path, help="SQLite file (default: under bench/results/)")
    parser.add_argument("--json", type=Path, default=RESULTS_DIR / "extensions.json")
    parser.add_argument(
        "--flat-sizes",
        default=",".join(map(str, FLAT_PAGE_URLS)),
        help="file sizes (URLs) of the memory-flatness part, comma-separated; '' for none",
    )
    args = parser.parse_args(argv)

    RESULTS_DIR.mkdir(exist_ok=True)
    configure(args.db or RESULTS_DIR / f"extensions-{args.rows}.sqlite3")
    build_urls()
    seed(args.rows)
    urls = args.rows * len(LANGUAGES)
    register(urls)  # limit: one file of all the URLs, once measured

    from django.conf import settings

    load_before = os.getloadavg()
    results: dict[str, Any] = {
        "rows": args.rows,
        "languages": len(LANGUAGES),
        "urls_per_section": urls,
        "repeat": args.repeat,
        "settings": {
            "SITEMAPS_PLUS": settings.SITEMAPS_PLUS,
            "cache_backend": settings.CACHES["default"]["BACKEND"],
        },
        "cached": (
            "kept in the cache during the timed requests: version tokens, block figures, "
            "measured blocks (after measure_sitemaps) and layouts; not kept: the rendered "
            "files (each timed request of ours is a cold render: render, gzip, store)"
        ),
        "cases": {},
    }
    cases: dict[str, Any] = results["cases"]

    contrib = "contrib (i18n, alternates)"
    cases[contrib] = checked([("/contrib.xml", urls)])
    cases[contrib].update(timed(["/contrib.xml"], args.repeat, cold=False))
    cases[contrib]["peak_bytes"] = peak_memory(lambda: get("/contrib.xml"))
    per_url(cases[contrib])
    print_case(contrib, cases[contrib])

    def run_sections(state: str) -> None:
        for name, label in SECTIONS.items():
            files = layout(name)
            case = checked(files)
            assert case["urls"] == urls, (name, state, case["urls"], urls)
            case["urls_per_file"] = sorted({count for _, count in files})
            case.update(timed([path for path, _ in files], args.repeat, cold=True))
            case["peak_bytes"] = cold_peak(files[0][0])
            per_url(case)
            cases[f"{label}, {state}"] = case
            print_case(f"{label}, {state}", case)

    # As a deployment lays them out before measure_sitemaps has run.
    run_sections("not measured")
    results["measure_sitemaps"] = measure_sitemaps()
    print(
        f"measure_sitemaps: {results['measure_sitemaps']['seconds']:.3f} s "
        f"({results['measure_sitemaps']['cpu_seconds']:.3f} s CPU): "
        + "; ".join(results["measure_sitemaps"]["output"]),
        flush=True,
    )
    run_sections("measured")

    base = cases[contrib]["us_per_url"]
    base_cpu = cases[contrib]["cpu_us_per_url"]
    results["speedup_per_url"] = {
        label: {"wall": base / case["us_per_url"], "cpu": base_cpu / case["cpu_us_per_url"]}
        for label, case in cases.items()
        if label != contrib
    }
    for label, speedup in results["speedup_per_url"].items():
        print(f"per URL vs contrib, {label}: {speedup['wall']:.1f}x ({speedup['cpu']:.1f}x CPU)")

    flat_sizes = tuple(int(size) for size in args.flat_sizes.split(",") if size)
    results["peak_by_page_urls"] = flat_memory(args.rows, flat_sizes)
    results["load_average"] = {"before": load_before, "after": os.getloadavg()}
    results["cpu_count"] = os.cpu_count()
    results["python"] = sys.version.split()[0]
    results["machine"] = platform.platform()
    import django

    results["django"] = django.get_version()
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"load average before/after: {load_before} / {results['load_average']['after']}")
    print(f"written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
