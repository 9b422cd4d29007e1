"""The admin overview's figures on the core benchmark's data.

The overview (``django_sitemaps_plus.overview.sections``) asks each section
for its files (``index_pages()``, the index's own queries) and for its URLs by
lastmod day (``lastmod_counts()``: one grouped query for a model section).
This measures both per section of the benchmark (``articles``: lastmod from
its own column; ``articles-comments``: the latest of its column and its
comments', a correlated subquery per row), and the whole overview computation
with its query count, cold and warm, on the seeded articles (``bench/seed.py``,
shared with ``bench_core``). Times are the median of ``--repeat`` runs after
one warm-up. The overview remembers both figures in the cache
(``cache.remember``) until a section changes: "warm" is every later request.

    python -m bench.bench_overview --rows 1000000
    python -m bench.bench_overview --rows 2000 --repeat 1   # smoke
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.bench_core import median_ms, seeded_data


def measure(repeat: int) -> list[tuple[str, float, int]]:
    """(case, median milliseconds, queries) per case."""
    from django.conf import settings
    from django.db import connection
    from django.test import RequestFactory
    from django.test.utils import CaptureQueriesContext, override_settings

    from django_sitemaps_plus import overview
    from django_sitemaps_plus.registry import site as registry
    from django_sitemaps_plus.sites import site_context

    site = site_context(None)
    request = RequestFactory().get("/admin/django_sitemaps_plus/sitemapoverview/")
    cases: list[tuple[str, Callable[[], Any]]] = []
    for section in registry:
        name = section.get_name()
        cases.append((f"`{name}`: `index_pages()`", lambda s=section: s.index_pages(site)))
        cases.append((f"`{name}`: `lastmod_counts()`", lambda s=section: s.lastmod_counts(site)))
    from django_sitemaps_plus.conf import get_cache

    def cold() -> Any:
        get_cache().clear()
        return overview.sections(request)

    cases.append(("the whole overview, cold (cache cleared first)", cold))
    cases.append(
        ("the whole overview, warm (figures remembered)", lambda: overview.sections(request))
    )
    results = []
    # The benchmark's settings turn the cache off (bench_core measures renders);
    # the overview's own default is the cache on.
    cached = {**settings.SITEMAPS_PLUS, "CACHE": True}
    with override_settings(SITEMAPS_PLUS=cached):
        for label, run in cases:
            with CaptureQueriesContext(connection) as queries:
                run()
            results.append((label, median_ms(run, repeat), len(queries)))
    return results


def main() -> None:
    args = seeded_data(__doc__.split("\n", 1)[0])
    print("| case | median | queries |\n|---|---:|---:|")
    for label, ms, queries in measure(args.repeat):
        print(f"| {label} | {ms:,.0f} ms | {queries} |")


if __name__ == "__main__":
    main()
