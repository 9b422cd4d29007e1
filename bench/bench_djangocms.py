"""The django CMS integration beside django CMS's ``CMSSitemap``, on one site.

Seeds (once, in bulk) ``--pages`` pages under a home page, each published in
English and French (djangocms-versioning versions, page URLs), every version
published at its own moment. Then measures, through Django's test client,
with our cache off (both render every time):

- the index: ours (``/sitemap.xml``, each file's lastmod in one grouped
  query) against ``CMSSitemap`` through ``django.contrib.sitemaps``' index
  view (which reads every row's ``lastmod()``);
- one full file: ours (``/sitemap-pages-1.xml``, filled from its entries'
  measured bytes, with alternates) against ``CMSSitemap``'s first page
  (50,000 URLs, no alternates). Files may differ in size, so the table also
  gives the time and memory per URL.

Queries are counted on a warm-up run; times are the median of ``--repeat``
runs; memory is the tracemalloc peak of one request, its body read chunk
by chunk and not kept. The URLs of both are
checked equal before anything is timed.

    DJANGO_SETTINGS_MODULE=tests.djangocms_settings python -m bench.bench_djangocms --pages 100000

Needs django CMS (``pip install -e ".[test,djangocms]"``). Results are
printed and written to ``bench/results/djangocms-<pages>.{md,json}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path

from bench.bench_wagtail import HOST, RESULTS_DIR, _step, body, locs, measure, table

LANGUAGES = ("en", "fr")


def configure(pages: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.djangocms_settings")
    RESULTS_DIR.mkdir(exist_ok=True)
    database = RESULTS_DIR / f"djangocms-{pages}.sqlite3"
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{database}")
    import django

    django.setup()
    from django.conf import settings

    settings.ROOT_URLCONF = "bench.djangocms_urls"
    settings.SITEMAPS_PLUS = {"CACHE": False}
    settings.ALLOWED_HOSTS = ["*"]
    # No images: the pages, their locations and alternates only, as CMSSitemap
    # lists them (the test app's plugin names images, which would size our
    # files for ten images per URL).
    from django_sitemaps_plus.contrib.djangocms.sections import PageSection
    from django_sitemaps_plus.registry import site

    site.unregister("pages")
    site.register(PageSection(extensions=[]))


def seed(pages: int) -> None:
    """A home page and ``pages`` children, each published in both languages."""
    from cms.api import create_page, create_page_content
    from cms.models import Page, PageContent, PageUrl
    from django.contrib.auth import get_user_model
    from django.contrib.contenttypes.models import ContentType
    from django.contrib.sites.models import Site
    from django.core.management import call_command
    from django.db import transaction
    from djangocms_versioning.models import Version

    call_command("migrate", verbosity=0)
    if Page.objects.count() > pages:
        return
    site = Site.objects.get(pk=1)
    site.domain = HOST
    site.save()
    user = get_user_model().objects.create_superuser("bench", "bench@example.com", "x")
    home = create_page("Home", "djangocmsapp/page.html", "en", created_by=user, site=site)
    create_page_content("fr", "Accueil", home, created_by=user)
    for language in LANGUAGES:
        Version.objects.get(cms_pagecontent__page=home, cms_pagecontent__language=language).publish(
            user
        )
    with transaction.atomic():
        home.set_as_homepage(user)
    home.refresh_from_db()
    content_type = ContentType.objects.get_for_model(PageContent)
    start = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    batch = 5_000
    with transaction.atomic():
        for first in range(0, pages, batch):
            numbers = range(first, min(first + batch, pages))
            made = Page.objects.bulk_create(
                Page(
                    path=home.path + _step(n + 1),
                    depth=home.depth + 1,
                    numchild=0,
                    parent=home,
                    site=site,
                    created_by="bench",
                    changed_by="bench",
                )
                for n in numbers
            )
            contents = PageContent._base_manager.bulk_create(
                PageContent(
                    page=page,
                    language=language,
                    title=f"Page {n} {language}",
                    slug=f"page-{n}-{language}",
                    template="djangocmsapp/page.html",
                    created_by="bench",
                    changed_by="bench",
                )
                for page, n in zip(made, numbers)
                for language in LANGUAGES
            )
            PageUrl.objects.bulk_create(
                PageUrl(
                    page=content.page,
                    language=content.language,
                    slug=content.slug,
                    path=content.slug,
                    site=site,
                    managed=True,
                )
                for content in contents
            )
            Version.objects.bulk_create(
                Version(
                    content_type=content_type,
                    object_id=content.pk,
                    created_by=user,
                    number="1",
                    state="published",
                    modified=start + dt.timedelta(minutes=i + first * 2),
                )
                for i, content in enumerate(contents)
            )
            PageContent._base_manager.filter(pk__in=[c.pk for c in contents]).update(
                changed_date=start
            )
        Page.objects.filter(pk=home.pk).update(numchild=pages)
    print(f"seeded {pages:,} pages in {len(LANGUAGES)} languages", file=sys.stderr)


def _all_urls(index: str) -> set[str]:
    found: set[str] = set()
    for file_url in locs(body(index)):
        found |= set(locs(body(file_url.removeprefix(f"https://{HOST}"))))
    return found


def verify() -> None:
    ours = _all_urls("/sitemap.xml")
    # CMSSitemap's locations are http (contrib's default protocol); the pages match.
    theirs = {url.replace("http://", "https://", 1) for url in _all_urls("/cms-index.xml")}
    assert ours == theirs, (len(ours), len(theirs), sorted(ours ^ theirs)[:5])
    print(f"verified: the same {len(ours):,} URLs", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument(
        "--results", type=Path, default=RESULTS_DIR, help="where the report is written"
    )
    args = parser.parse_args(argv)
    configure(args.pages)
    seed(args.pages)
    if not args.no_verify:
        verify()
    cases = {
        "index, ours": "/sitemap.xml",
        "index, CMSSitemap": "/cms-index.xml",
        "full file, ours": "/sitemap-pages-1.xml",
        "full file, CMSSitemap": "/cms-sitemap-cmspages.xml?p=1",
    }
    results = {name: measure(path, args.repeat) for name, path in cases.items()}
    import cms
    import django
    import djangocms_versioning
    from django.db import connection

    meta = {
        "pages": args.pages,
        "languages": len(LANGUAGES),
        "repeat": args.repeat,
        "python": platform.python_version(),
        "django": django.get_version(),
        "django_cms": cms.__version__,
        "djangocms_versioning": djangocms_versioning.__version__,
        "database": connection.vendor,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }
    lines = [
        f"django CMS site of {args.pages:,} pages in {len(LANGUAGES)} languages, "
        f"{meta['database']}, Django {meta['django']}, django CMS {meta['django_cms']}, "
        f"djangocms-versioning {meta['djangocms_versioning']}, Python {meta['python']}, "
        f"{meta['machine']}; median of {args.repeat}, our cache off",
        "",
        *table(results),
    ]
    ours_index, their_index = results["index, ours"], results["index, CMSSitemap"]
    ours_file, their_file = results["full file, ours"], results["full file, CMSSitemap"]
    per_url = (their_file["seconds"] / max(their_file["urls"], 1)) / (
        ours_file["seconds"] / max(ours_file["urls"], 1)
    )
    lines += [
        "",
        f"index: {their_index['seconds'] / ours_index['seconds']:.1f}x faster, "
        f"{their_index['peak_bytes'] / max(ours_index['peak_bytes'], 1):.0f}x less memory; "
        f"full file per URL: {per_url:.1f}x faster (ours also writes the alternates)",
    ]
    report = "\n".join(lines)
    print(report)
    args.results.mkdir(parents=True, exist_ok=True)
    stem = args.results / f"djangocms-{args.pages}"
    stem.with_suffix(".md").write_text(report + "\n")
    stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
