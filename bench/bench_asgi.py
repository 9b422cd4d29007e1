"""ASGI serving benchmark: one 50,000-URL file under uvicorn, ours and contrib's.

Each case starts a fresh uvicorn (one process) on 127.0.0.1 over the core
benchmark's data (a copy of the seeded SQLite file, as ``bench.bench_serving``
uses; Redis cache), requests the file once (unmeasured: the process's
first request) and then ``--runs`` times, and reports the median
time to the first body byte, the median total time, and the server's peak
memory growth (``VmHWM`` of the server process, before the first measured request and
after the last). Cases: contrib's view (rendered per request); ours with the
cache off (rendered and streamed per request); ours cold (invalidated before
each request: rendered, gzipped and stored while it is sent), to a client
with gzip and without; ours warm to a client without gzip
(decompressed while streamed) and with gzip (the stored bytes).

    python -m bench.bench_asgi                 # 60,000 rows: page 1 holds 50,000 URLs
    python -m bench.bench_asgi --rows 1000000  # the core benchmark's data

Results: ``bench/results/asgi-<rows>.json`` and a section of
``docs/benchmarks-serving.md``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.bench_serving import CONTRIB_PAGE, PAGE, RESULTS, ROOT, configure, free_port, prepare

DOC = ROOT / "docs" / "benchmarks-serving.md"
#: The PostgreSQL database of ``--db postgres`` (created when missing);
#: ``BENCH_PG_URL`` names another (``{rows}`` is replaced by the row count).
PG_URL = os.environ.get(
    "BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/sitemaps_plus_bench_asgi_{rows}"
)
DATABASES = {"sqlite": "SQLite file", "postgres": "PostgreSQL 15 on 127.0.0.1"}


def markers(db: str) -> tuple[str, str]:
    """The doc block of one database's run (SQLite's keeps its first name)."""
    name = "asgi" if db == "sqlite" else f"asgi-{db}"
    return f"<!-- {name}: written by bench/bench_asgi.py -->", f"<!-- /{name} -->"


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _get(port: int, path: str, headers: dict[str, str]) -> tuple[float, float, int]:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        first = response.read(1)
        first_byte = time.perf_counter() - started
        size = len(first) + len(response.read())
        if response.status != 200:
            raise RuntimeError(f"{path}: HTTP {response.status}")
        return first_byte, time.perf_counter() - started, size
    finally:
        connection.close()


def case(
    path: str,
    cached: bool,
    runs: int,
    cold: bool,
    gzip: bool,
    after_index: bool = False,
    pool: bool = False,
) -> dict[str, Any]:
    from django_sitemaps_plus.serving.versions import invalidate

    port = free_port()
    env = {
        **os.environ,
        "SERVING_CACHE": "1" if cached else "0",
        "SERVING_DB_POOL": "1" if pool else "0",
        "PYTHONPATH": str(ROOT),
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "bench.serving.asgi:application",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).connect()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        headers = {"Accept-Encoding": "gzip"} if gzip else {}
        # One request before the measured runs: the process's first request
        # (imports, URLconf, the database connection) is not what is measured,
        # and a warm case's file is stored by it.
        _get(port, path, headers)
        before = _peak_kib(server.pid)
        results = []
        for _ in range(runs):
            if cold:
                invalidate("articles")
            if after_index:
                # As a crawler reads: the index (unmeasured) lays the files out
                # with the section's new version, then the cold file.
                _get(port, "/sitemap.xml", headers)
            results.append(_get(port, path, headers))
        after = _peak_kib(server.pid)
    finally:
        server.terminate()
        _, log = server.communicate(timeout=30)
    return {
        "ttfb_s": statistics.median(r[0] for r in results),
        "total_s": statistics.median(r[1] for r in results),
        "bytes": results[-1][2],
        "peak_growth_mib": round((after - before) / 1024, 1),
        "sync_iterator_warning": "must consume synchronous iterators" in log,
        "runs": runs,
    }


def write_doc(report: dict[str, Any]) -> None:
    begin, end_marker = markers(report["db"])
    database = DATABASES[report["db"]]
    option = "" if report["db"] == "sqlite" else f" --db {report['db']}"
    rows = [
        begin,
        f"## Under ASGI (uvicorn, {database}): one 50,000-URL page",
        "",
        f"Produced by `python -m bench.bench_asgi{option}` ({report['rows']:,} articles, "
        f"{database}, "
        "Redis cache, one uvicorn process on 127.0.0.1, client on the same 2 cores; medians of "
        f"{report['runs']} requests after one unmeasured, each case in a fresh server). "
        "Time to first byte against "
        "the whole response says whether the file streams; peak memory is the growth of the "
        "server's peak resident set over the runs. Settings: `bench/serving/settings.py` "
        "(Django's defaults otherwise: CONN_MAX_AGE = 0; our defaults: gzip level 6, "
        "CACHE_TIMEOUT 3600 s); cache off: `CACHE: False`; cold: `invalidate()` before each "
        "measured request, so nothing of the file is cached (its version tokens are); cold "
        "file after its index: `invalidate()`, then the index (unmeasured), then the file, "
        "as a crawler reads after a change; warm: "
        "the file stored by the unmeasured request (the gzip bytes, in 512 KiB pieces, and "
        "its metadata).",
        "",
        "| case | first byte | total | first byte / total | bytes sent | peak memory growth "
        "| Django's sync-iterator warning |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, figures in report["cases"].items():
        rows.append(
            f"| {label} | {figures['ttfb_s'] * 1000:,.0f} ms | {figures['total_s'] * 1000:,.0f} ms"
            f" | {figures['ttfb_s'] / figures['total_s']:.0%} | {figures['bytes']:,} | "
            f"{figures['peak_growth_mib']} MiB | "
            f"{'yes' if figures['sync_iterator_warning'] else 'no'} |"
        )
    contrib = report["cases"]["django.contrib.sitemaps, rendered per request"]["total_s"]
    ours = report["cases"]["ours, cache off (rendered and streamed per request)"]["total_s"]
    rows += [
        "",
        f"Rendered per request, ours is {contrib / ours:.1f}x faster than contrib under ASGI. "
        "contrib renders its template whole before sending (first byte at the end); ours "
        "streams. The first byte waits for the request's own costs (uvicorn, Django's "
        "handler, the cache lookup: a warm gzip file's whole response shows them), the "
        "database connection (opened per request with Django's CONN_MAX_AGE = 0 default, "
        "as Django advises under ASGI; the pool rows use Django 5.1's psycopg pool "
        "instead), and the first rows. The file's lastmod costs no query before it: the "
        "layout the latest index made gives it when no save came since (the cold file "
        "after its index) and, with the cache off, for a request that is not conditional. "
        "A cold cached file is rendered into the cache (gzip, stored in pieces as they "
        "fill) and answered from the stored entry as a hit is, with its ETag and "
        "Content-Length: its first byte leaves after the render. "
        "A warm file to a client without gzip starts once its compressed body is fetched "
        "whole (so an evicted piece cannot truncate it) and its first 16 KiB are "
        "decompressed. The views are sync: the cache is read with its sync methods in the "
        "view's thread, under ASGI as under WSGI. Timings are of one machine of 2 cores, "
        "with the client on it: compare rows of one run, not runs.",
        end_marker,
    ]
    block = "\n".join(rows)
    text = DOC.read_text()
    start, end = text.find(begin), text.find(end_marker)
    if 0 <= start < end:
        text = text[:start] + block + text[end + len(end_marker) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    DOC.write_text(text)


def kept_block() -> str:
    """The doc blocks of every database's run, for bench_serving's rewrite."""
    text = DOC.read_text() if DOC.exists() else ""
    kept = ""
    for db in DATABASES:
        begin, end = markers(db)
        start, stop = text.find(begin), text.find(end)
        if 0 <= start < stop:
            kept += "\n" + text[start : stop + len(end)] + "\n"
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--db", choices=sorted(DATABASES), default="sqlite")
    args = parser.parse_args()
    configure(args.rows, PG_URL.format(rows=args.rows) if args.db == "postgres" else None)
    prepare(args.rows)
    cases = {
        "django.contrib.sitemaps, rendered per request": (CONTRIB_PAGE, False, False, False),
        "ours, cache off (rendered and streamed per request)": (PAGE, False, False, False),
        "ours, cold cache (render, gzip, store, send), gzip": (PAGE, True, True, True),
        "ours, cold cache, no gzip (sent plain while stored gzip)": (PAGE, True, True, False),
        "ours, cold file after its index (no save since), gzip": (PAGE, True, True, True, True),
        "ours, warm cache, no gzip (decompressed while streamed)": (PAGE, True, False, False),
        "ours, warm cache, gzip": (PAGE, True, False, True),
    }
    if args.db == "postgres":
        # The connection opened per request (CONN_MAX_AGE = 0) is the
        # deployment's cost, not the view's: the same with Django's pool.
        cases |= {
            "ours, cache off, connection pool": (PAGE, False, False, False, False, True),
            "ours, cold cache, gzip, connection pool": (PAGE, True, True, True, False, True),
        }
    report = {
        "db": args.db,
        "rows": args.rows,
        "runs": args.runs,
        "cases": {
            label: case(*spec[:2], args.runs, *spec[2:])  # type: ignore[arg-type]
            for label, spec in cases.items()
        },
    }
    suffix = "" if args.db == "sqlite" else f"-{args.db}"
    (RESULTS / f"asgi-{args.rows}{suffix}.json").write_text(json.dumps(report, indent=1))
    write_doc(report)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
