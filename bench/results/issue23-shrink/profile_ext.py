"""cProfile of every file of bench_extensions' alternates-images section
(50,000 URLs): call counts and time by function, one tree."""

from __future__ import annotations

import cProfile
import pstats
import sys

sys.argv = sys.argv[:1]
from bench import bench_extensions as b  # noqa: E402

b.configure(b.RESULTS_DIR / "extensions-10000.sqlite3")
b.build_urls()
b.seed(10_000)
b.register(50_000)
from django_sitemaps_plus.registry import site  # noqa: E402
from django_sitemaps_plus.sites import site_context  # noqa: E402

pages = site.get("alternates-images").index_pages(site_context())
paths = [f"/sitemap-alternates-images-{p.number}.xml" for p in pages]
for p in paths:
    b.get(p)
profile = cProfile.Profile()
profile.enable()
for p in paths:
    b.get(p)
profile.disable()
pstats.Stats(profile).sort_stats("tottime").print_stats(30)
profile.dump_stats(f"/tmp/ext-{__import__('django_sitemaps_plus').__file__.split('/')[3]}.prof")
