"""Stampede benchmark: N concurrent cold requests for one file or the index.

gunicorn (gthread, ``--workers`` x ``--threads``) on 127.0.0.1 with the
sitemap cache in Redis serves the core benchmark's data (a copy of the seeded
SQLite file, as ``bench.bench_serving`` uses). Each round invalidates the
cache, then ``--requests`` clients released together by a barrier ask for
the same cold URL. A middleware counts each request's database queries (in
the view: with the cache on, a file is rendered inside the view) and returns
them in a header. Reported per URL: total queries over all requests, how many
requests ran any query, p50/p99/max latency.

    python -m bench.bench_stampede                       # this checkout
    python -m bench.bench_stampede --code /tmp/before    # another checkout of the package

``--code`` puts another checkout first on the server's ``PYTHONPATH`` (e.g. a
``git worktree`` of the commit before a change), so "before" and "after" run
on the same data, server and settings. Results: ``bench/results/stampede-<label>.json``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.bench_serving import RESULTS, ROOT, configure, free_port, prepare

MIDDLEWARE = """
from django.db import connection


class CountQueries:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        count = [0]

        def counting(execute, sql, params, many, context):
            count[0] += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counting):
            response = self.get_response(request)
        response["X-Queries"] = str(count[0])
        return response
"""

SETTINGS = """
from bench.serving.settings import *  # noqa

MIDDLEWARE = ["stampede_middleware.CountQueries", *MIDDLEWARE]
SITEMAPS_PLUS = {**SITEMAPS_PLUS, "CACHE": True, "CACHE_LOCK_WAIT": 120.0,
                 "CACHE_LOCK_TIMEOUT": 300}
"""


class Server:
    """gunicorn gthread on 127.0.0.1 with ``overlay`` and ``code`` first on
    its path; ``settings`` and ``application`` name what it serves."""

    def __init__(
        self,
        code: Path,
        overlay: Path,
        workers: int,
        threads: int,
        settings: str = "stampede_settings",
        application: str = "bench.serving.wsgi:application",
    ) -> None:
        self.port = free_port()
        path = os.pathsep.join([str(overlay), str(code), str(ROOT)])
        env = {**os.environ, "PYTHONPATH": path, "DJANGO_SETTINGS_MODULE": settings}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                application,
                "--bind",
                f"127.0.0.1:{self.port}",
                "--worker-class",
                "gthread",
                "--workers",
                str(workers),
                "--threads",
                str(threads),
                "--timeout",
                "300",
                "--log-level",
                "warning",
            ],
            env=env,
            cwd=code,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                self.get("/robots.txt")
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("gunicorn did not start")

    def get(self, path: str) -> tuple[int, int, float]:
        """Status, queries the view ran, seconds."""
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
            response = connection.getresponse()
            response.read()
            queries = int(response.getheader("X-Queries") or 0)
            return response.status, queries, time.perf_counter() - started
        finally:
            connection.close()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def stampede(server: Server, path: str, requests: int) -> dict[str, Any]:
    from django_sitemaps_plus.serving.versions import invalidate

    invalidate("articles")
    server.get("/robots.txt")  # every worker thread is up
    barrier = threading.Barrier(requests)
    results: list[tuple[int, int, float]] = []
    lock = threading.Lock()

    def client() -> None:
        barrier.wait()
        outcome = server.get(path)
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=client) for _ in range(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    times = sorted(t for _, _, t in results)
    return {
        "requests": requests,
        "statuses": sorted({s for s, _, _ in results}),
        "queries_total": sum(q for _, q, _ in results),
        "requests_with_queries": sum(1 for _, q, _ in results if q),
        "p50_s": statistics.median(times),
        "p99_s": times[min(len(times) - 1, int(len(times) * 0.99))],
        "max_s": times[-1],
    }


DOC = ROOT / "docs" / "benchmarks-serving.md"
BEGIN = "<!-- stampede: written by bench/bench_stampede.py -->"
END = "<!-- /stampede -->"


def kept_block() -> str:
    """The stampede section of the serving page (bench_serving keeps it)."""
    text = DOC.read_text() if DOC.exists() else ""
    start, end = text.find(BEGIN), text.find(END)
    return "\n" + text[start : end + len(END)] + "\n" if 0 <= start < end else ""


def write_doc() -> None:
    """Replace the stampede section with the saved before/after results."""
    runs = {}
    for label in ("before", "after"):
        path = RESULTS / f"stampede-{label}.json"
        if path.exists():
            runs[label] = json.loads(path.read_text())
    if not runs:
        return
    any_run = next(iter(runs.values()))
    lines = [
        BEGIN,
        "## A stampede: 100 concurrent cold requests",
        "",
        f"Produced by `python -m bench.bench_stampede` ({any_run['rows']:,} articles, SQLite "
        f"file, Redis cache, {any_run['server']}, on 127.0.0.1, clients on the same 2 cores). "
        "Each round invalidates the cache, then 100 clients released together ask for one "
        "cold URL. Queries: counted in the view of each request (a cached file is rendered "
        "there). *Before*: the package as of the commit before the render lock moved ahead "
        "of the queries (`--code` a worktree of it); *after*: this checkout.",
        "",
        "| URL | code | queries (all requests) | requests that queried | p50 | p99 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for kind, url in (("file", "/sitemap-articles-1.xml"), ("index", "/sitemap.xml")):
        for label, run in runs.items():
            figures = run[kind]
            lines.append(
                f"| `{url}` | {label} | {figures['queries_total']} | "
                f"{figures['requests_with_queries']} of {figures['requests']} | "
                f"{figures['p50_s'] * 1000:,.0f} ms | {figures['p99_s'] * 1000:,.0f} ms |"
            )
    lines += [
        "",
        "Before, every request that arrived before the render finished ran the page's "
        "aggregate queries (and, for the index, every section's) before it found the lock "
        "taken; after, a request takes the lock or waits for the stored file before any "
        "query, so 99 of the 100 cost the database nothing and the index's p50 falls with "
        "the database work it no longer queues behind.",
        END,
    ]
    block = "\n".join(lines)
    text = DOC.read_text()
    start, end = text.find(BEGIN), text.find(END)
    if 0 <= start < end:
        text = text[:start] + block + text[end + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    DOC.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=105_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose package serves")
    parser.add_argument("--label", default="after")
    args = parser.parse_args()
    configure(args.rows)
    prepare(args.rows)
    with tempfile.TemporaryDirectory() as overlay:
        Path(overlay, "stampede_middleware.py").write_text(MIDDLEWARE)
        Path(overlay, "stampede_settings.py").write_text(SETTINGS)
        server = Server(args.code.resolve(), Path(overlay), args.workers, args.threads)
        try:
            report = {
                "label": args.label,
                "rows": args.rows,
                "server": f"gunicorn gthread {args.workers} workers x {args.threads} threads",
                "file": stampede(server, "/sitemap-articles-1.xml", args.requests),
                "index": stampede(server, "/sitemap.xml", args.requests),
            }
        finally:
            server.stop()
    out = RESULTS / f"stampede-{args.label}.json"
    out.write_text(json.dumps(report, indent=1))
    write_doc()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
