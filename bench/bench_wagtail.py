"""The Wagtail integration beside ``wagtail.contrib.sitemaps``, on one page tree.

Seeds (once, in bulk) a Wagtail tree of ``--pages`` live pages of one
specific type (``tests.wagtailapp.HomePage``): the site's home, 100 sections
and their children, every page published at its own moment. Then measures,
through Django's test client, with our cache off (both render every time):

- the index: ours (``/sitemap.xml``, each file's lastmod) against Wagtail's
  (``wagtail.contrib.sitemaps.views.index``: Django's index, whose lastmod
  reads every page's ``lastmod()``);
- one full file: ours (``/sitemap-pages-1.xml``, filled from its entries'
  measured bytes in whole key blocks) against Wagtail's first page
  (``?p=1``, 50,000 URLs, ``.specific()`` over every page). Files may differ
  in size, so the table also gives the time and memory per URL.

Queries are counted on a warm-up run; times are the median of ``--repeat``
runs; memory is the tracemalloc peak of one request, its body read
chunk by chunk and not kept. The URLs of both are
checked equal (same pages, same locations) before anything is timed.

    DJANGO_SETTINGS_MODULE=tests.wagtail_settings python -m bench.bench_wagtail --pages 100000

Needs Wagtail (``pip install -e ".[test,wagtail]"``). Results are printed and
written to ``bench/results/wagtail-<pages>.{md,json}``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import statistics
import sys
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
HOST = "bench.example"
SECTIONS = 100
STEP_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def configure(pages: int, locales: int = 1) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.wagtail_settings")
    RESULTS_DIR.mkdir(exist_ok=True)
    database = RESULTS_DIR / f"wagtail-{_name(pages, locales)}.sqlite3"
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{database}")
    import django

    django.setup()
    from django.conf import settings

    # One locale for the comparison: Wagtail's sitemap lists only the default
    # locale's tree. With --locales 2, a French tree mirrors the English one.
    settings.WAGTAIL_I18N_ENABLED = locales > 1
    settings.ROOT_URLCONF = "bench.wagtail_urls"
    settings.SITEMAPS_PLUS = {"CACHE": False}
    # No images: the pages, their locations (and alternates with --locales 2)
    # only, as Wagtail's sitemap lists them (the test app's ArticlePage names
    # images, which would size our files for ten images per URL).
    from django_sitemaps_plus.contrib.wagtail.sections import PageSection
    from django_sitemaps_plus.registry import site

    site.unregister("pages")
    site.register(PageSection(extensions=[]))


def _step(number: int) -> str:
    """A treebeard path step: ``number`` in base 36, four characters."""
    out = ""
    for _ in range(4):
        number, digit = divmod(number, 36)
        out = STEP_ALPHABET[digit] + out
    return out


def _name(pages: int, locales: int) -> str:
    return f"{pages}" if locales == 1 else f"{pages}-{locales}locales"


def seed(pages: int, locales: int = 1) -> None:
    """The tree, written in bulk (add_child would take minutes per 100,000)."""
    import datetime as dt

    from django.contrib.contenttypes.models import ContentType
    from django.core.management import call_command
    from django.db import connection, transaction
    from wagtail.models import Locale, Page, Site

    from tests.wagtailapp.models import HomePage

    call_command("migrate", verbosity=0)
    if Site.objects.filter(hostname=HOST).exists():
        return
    print(f"Seeding {pages:,} pages...", file=sys.stderr)
    content_type = ContentType.objects.get_for_model(HomePage)
    locale = Locale.objects.get_or_create(language_code="en")[0]
    start = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    with transaction.atomic():
        Site.objects.all().delete()
        Page.objects.filter(depth__gt=1).delete()
        root = Page.objects.get(depth=1)
        rows: list[Page] = []

        def page(path: str, url_path: str, slug: str, number: int, children: int) -> Page:
            moment = start + dt.timedelta(minutes=number)
            return Page(
                title=slug,
                draft_title=slug,
                slug=slug,
                path=path,
                depth=len(path) // 4,
                numchild=children,
                url_path=url_path,
                content_type=content_type,
                locale=locale,
                translation_key=uuid.uuid4(),
                live=True,
                has_unpublished_changes=False,
                first_published_at=moment,
                last_published_at=moment,
            )

        leaves = pages - 1 - SECTIONS
        per_section = -(-leaves // SECTIONS)
        home_path = root.path + _step(1)
        rows.append(page(home_path, "/home/", "home", 0, SECTIONS))
        number = 1
        for s in range(1, SECTIONS + 1):
            section_path = home_path + _step(s)
            count = min(per_section, leaves - (s - 1) * per_section)
            rows.append(page(section_path, f"/home/s{s}/", f"s{s}", number, max(count, 0)))
            number += 1
            for leaf in range(1, count + 1):
                rows.append(
                    page(
                        section_path + _step(leaf),
                        f"/home/s{s}/p{leaf}/",
                        f"p{leaf}",
                        number,
                        0,
                    )
                )
                number += 1
        Page.objects.bulk_create(rows, batch_size=2000)
        Page.objects.filter(pk=root.pk).update(numchild=1)
        keys = list(Page.objects.filter(depth__gt=1).values_list("pk", flat=True))
        table = HomePage._meta.db_table
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {table} (page_ptr_id) VALUES (%s)", [(k,) for k in keys]
            )
        home = Page.objects.get(path=home_path)
        Site.objects.create(hostname=HOST, port=443, root_page=home, is_default_site=True)
        if locales > 1:
            _translate_tree(rows, root, Locale.objects.get_or_create(language_code="fr")[0])


def _translate_tree(english: list[Any], root: Any, locale: Any) -> None:
    """A French copy of every page, with the same translation keys, under a
    French home beside the English one (as Wagtail's translations are)."""
    from django.db import connection
    from wagtail.models import Page

    from tests.wagtailapp.models import HomePage

    home_path = english[0].path
    french_home = root.path + _step(2)
    copies = []
    for page in english:
        copy = Page(
            **{
                field.attname: getattr(page, field.attname)
                for field in Page._meta.concrete_fields
                if field.attname not in ("id", "locale_id")
            }
        )
        copy.locale = locale
        copy.path = french_home + page.path[len(home_path) :]
        copy.url_path = "/home-fr/" + page.url_path[len("/home/") :]
        if page.path == home_path:
            copy.slug = "home-fr"
        copies.append(copy)
    Page.objects.bulk_create(copies, batch_size=2000)
    Page.objects.filter(pk=root.pk).update(numchild=2)
    keys = list(Page.objects.filter(locale=locale).values_list("pk", flat=True))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {HomePage._meta.db_table} (page_ptr_id) VALUES (%s)",
            [(k,) for k in keys],
        )


def client() -> Any:
    from django.test import Client

    return Client(HTTP_HOST=HOST, secure=True)


def body(path: str) -> bytes:
    response = client().get(path)
    assert response.status_code == 200, (path, response.status_code)
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return bytes(response.content)


def drain(path: str) -> None:
    """GET ``path`` and read the body chunk by chunk, holding none: the
    memory measured is the view's, as a server sending the chunks sees it,
    not a copy the harness would join (twice a streamed file's size)."""
    response = client().get(path)
    assert response.status_code == 200, (path, response.status_code)
    if getattr(response, "streaming", False):
        for _chunk in response.streaming_content:
            pass


def locs(data: bytes) -> list[str]:
    return re.findall(r"<loc>([^<]+)</loc>", data.decode())


def measure(path: str, repeat: int) -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        data = body(path)
    # Read now: captured_queries slices the live log, which later requests reset.
    queries = len(captured.captured_queries)
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        body(path)
        times.append(time.perf_counter() - started)
    gc.collect()
    tracemalloc.start()
    drain(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    urls = len(locs(data))
    return {
        "path": path,
        "urls": urls,
        "bytes": len(data),
        "queries": queries,
        "seconds": statistics.median(times),
        "peak_bytes": peak,
    }


def table(results: dict[str, dict[str, Any]]) -> list[str]:
    """The Markdown table of ``measure()`` results (the CMS benchmarks share it)."""
    lines = [
        "| case | URLs | queries | time (s) | µs per URL | peak memory (MB) | bytes per URL |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        per = max(r["urls"], 1)
        lines.append(
            f"| {name} | {r['urls']:,} | {r['queries']} | {r['seconds']:.3f} | "
            f"{r['seconds'] / per * 1e6:.1f} | {r['peak_bytes'] / 1e6:.1f} | "
            f"{r['peak_bytes'] / per:.0f} |"
        )
    return lines


def last_file() -> str:
    """The path of our index's last file (keyset pages cost the same anywhere)."""
    return locs(body("/sitemap.xml"))[-1].removeprefix(f"https://{HOST}")


def verify() -> None:
    """Same pages at the same locations, before anything is timed."""
    ours: set[str] = set()
    for file_url in locs(body("/sitemap.xml")):
        ours |= set(locs(body(file_url.removeprefix(f"https://{HOST}"))))
    theirs: set[str] = set()
    for file_url in locs(body("/wagtail-index.xml")):
        theirs |= set(locs(body(file_url.removeprefix(f"https://{HOST}"))))
    assert ours == theirs, (len(ours), len(theirs), sorted(ours ^ theirs)[:5])
    print(f"verified: the same {len(ours):,} URLs", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument(
        "--locales",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: a French translation of every page, hreflang alternates (ours only: "
        "Wagtail's sitemap lists the default locale alone)",
    )
    parser.add_argument(
        "--results", type=Path, default=RESULTS_DIR, help="where the report is written"
    )
    parser.add_argument(
        "--ours-only",
        action="store_true",
        help="only our index and file (Wagtail's index reads every page: at 1,000,000 "
        "pages that takes minutes)",
    )
    args = parser.parse_args(argv)
    configure(args.pages, args.locales)
    seed(args.pages, args.locales)
    if args.locales > 1:
        args.ours_only = True
    if not args.no_verify and not args.ours_only:
        verify()
    cases = {
        "index, ours": "/sitemap.xml",
        "index, wagtail.contrib.sitemaps": "/wagtail-index.xml",
        "full file, ours": "/sitemap-pages-1.xml",
        "last file, ours": last_file(),
        "full file, wagtail.contrib.sitemaps": "/wagtail-sitemap-pages.xml?p=1",
    }
    if args.ours_only:
        cases = {k: v for k, v in cases.items() if "wagtail.contrib" not in k}
    results = {name: measure(path, args.repeat) for name, path in cases.items()}
    import django
    import wagtail
    from django.db import connection

    meta = {
        "pages": args.pages,
        "repeat": args.repeat,
        "python": platform.python_version(),
        "django": django.get_version(),
        "wagtail": wagtail.__version__,
        "database": connection.vendor,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }
    lines = [
        f"Wagtail tree of {args.pages:,} pages in {args.locales} locale(s), "
        f"{meta['database']}, Django {meta['django']}, "
        f"Wagtail {meta['wagtail']}, Python {meta['python']}, {meta['machine']}; "
        f"median of {args.repeat}, our cache off",
        "",
        *table(results),
    ]
    if not args.ours_only:
        ours_index = results["index, ours"]
        their_index = results["index, wagtail.contrib.sitemaps"]
        ours_file = results["full file, ours"]
        their_file = results["full file, wagtail.contrib.sitemaps"]
        per_url = (their_file["seconds"] / their_file["urls"]) / (
            ours_file["seconds"] / ours_file["urls"]
        )
        lines += [
            "",
            f"index: {their_index['seconds'] / ours_index['seconds']:.1f}x faster, "
            f"{their_index['peak_bytes'] / max(ours_index['peak_bytes'], 1):.0f}x less memory; "
            f"full file per URL: {per_url:.1f}x faster",
        ]
    report = "\n".join(lines)
    print(report)
    args.results.mkdir(parents=True, exist_ok=True)
    stem = args.results / f"wagtail-{_name(args.pages, args.locales)}"
    stem.with_suffix(".md").write_text(report + "\n")
    stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
