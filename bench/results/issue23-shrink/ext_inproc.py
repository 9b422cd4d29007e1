"""bench_extensions' data and sections (10,000 galleries x 5 languages, 3
photos each), but every file of a section rendered (bench_extensions itself
asserts one 50,000-URL file per section, which neither c141bc9 nor HEAD lays
out with CACHE off: 100 files of 500 URLs). CPU time of all files of each
section (50,000 URLs), median of 7 rounds; queries per file."""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time

sys.argv = sys.argv[:1]
from bench import bench_extensions as b  # noqa: E402

b.configure(b.RESULTS_DIR / "extensions-10000.sqlite3")
b.build_urls()
b.seed(10_000)
b.register(50_000)
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from django_sitemaps_plus.registry import site  # noqa: E402
from django_sitemaps_plus.sites import site_context  # noqa: E402

out: dict[str, object] = {}
paths = {}
for name in ("alternates", "alternates-images"):
    pages = site.get(name).index_pages(site_context())
    paths[name] = [f"/sitemap-{name}-{p.number}.xml" for p in pages]
    with CaptureQueriesContext(connection) as q:
        size = b.get(paths[name][0])[1]
    out[name] = {
        "files": len(pages),
        "urls": sum(p.url_count for p in pages),
        "queries_file_1": len(q.captured_queries),
        "bytes_file_1": size,
    }
cpu: dict[str, list[float]] = {n: [] for n in paths}
for _ in range(7):
    for name, ps in paths.items():
        gc.collect()
        t = time.process_time()
        for p in ps:
            assert b.get(p)[0] == 200
        cpu[name].append(time.process_time() - t)
for name in paths:
    out[name]["cpu_ms"] = [round(v * 1000, 1) for v in cpu[name]]  # type: ignore[index]
    out[name]["cpu_median_ms"] = round(statistics.median(cpu[name]) * 1000, 1)  # type: ignore[index]
print(json.dumps(out))
