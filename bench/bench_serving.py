"""Serving benchmark: cached sitemap files over a real WSGI server and Redis.

On loopback only, bounded in time and requests:

1. gunicorn (``bench.serving.wsgi``) on 127.0.0.1 serving the core
   benchmark's data (1,000,000 articles, 50,000 URLs per file), once with
   ``SITEMAPS_PLUS["CACHE"]`` on (Redis) and once off;
2. a 50,000-URL page: contrib's sitemap view and ours rendered on every
   request (median of ``--renders`` requests), ours cold (invalidated before
   each request: render + compress + store), and warm under load from ``wrk``
   (``--duration`` seconds, ``--connections`` connections), with and without
   ``Accept-Encoding: gzip``, and 304s on ``If-None-Match``; and, in this
   process, the peak of the Python allocations of a cold file (tracemalloc);
3. ``build_sitemaps`` of the 1,000,000 URLs to a FileSystemStorage with gzip
   copies (time, peak RSS, files) in a fresh process, then an incremental
   rebuild after one article changed (files rewritten).

    python -m bench.bench_serving                  # 1,000,000 rows
    python -m bench.bench_serving --rows 60000 --duration 3   # smoke

The database is a copy of ``bench/results/bench-<rows>.sqlite3`` (seeded by
``python -m bench.bench_core`` or here), so the change made for the
incremental build never touches the core benchmark's data. Results go to
``bench/results/serving-<rows>.json`` and ``docs/benchmarks-serving.md``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DOC = ROOT / "docs" / "benchmarks-serving.md"
PAGE = "/sitemap-articles-1.xml"
CONTRIB_PAGE = "/contrib/sitemap-articles.xml?p=1"


# Setup ---------------------------------------------------------------------------


def configure(rows: int, database_url: str | None = None) -> None:
    """Set Django up on a copy of the seeded SQLite file, or on ``database_url``
    (a PostgreSQL database, created when missing)."""
    RESULTS.mkdir(exist_ok=True)
    if database_url is not None:
        from bench.bench_core import _create_pg_database

        _create_pg_database(database_url)
        os.environ["DATABASE_URL"] = database_url
    else:
        db = RESULTS / f"serving-{rows}.sqlite3"
        source = RESULTS / f"bench-{rows}.sqlite3"
        if not db.exists() and source.exists():
            shutil.copyfile(source, db)
        os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.serving.settings"
    os.environ.setdefault("BENCH_LIMIT", "50000")
    import django

    django.setup()


def prepare(rows: int) -> None:
    from django.core.management import call_command

    from bench import seed

    call_command("migrate", verbosity=0)
    if not seed.is_seeded(rows):
        print(f"seeding {rows:,} rows ...", file=sys.stderr)
        seed.seed(rows)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """gunicorn on 127.0.0.1, started and stopped by this process."""

    def __init__(self, cached: bool, workers: int) -> None:
        self.port = free_port()
        env = {**os.environ, "SERVING_CACHE": "1" if cached else "0", "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "bench.serving.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(workers),
                "--timeout",
                "300",
                "--log-level",
                "warning",
            ],
            env=env,
            cwd=ROOT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                status, _, _ = get(self.port, "/robots.txt")
                if status in (200, 404):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("gunicorn did not start")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def get(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


def timed(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[float, bytes]:
    started = time.perf_counter()
    status, _, body = get(port, path, headers)
    elapsed = time.perf_counter() - started
    if status != 200:
        raise RuntimeError(f"{path}: HTTP {status}")
    return elapsed, body


# Measurements --------------------------------------------------------------------


def renders(port: int, path: str, count: int) -> dict[str, Any]:
    times = []
    size = 0
    for _ in range(count):
        elapsed, body = timed(port, path)
        times.append(elapsed)
        size = len(body)
    return {"median_s": statistics.median(times), "max_s": max(times), "runs": count, "bytes": size}


def cold(port: int, count: int, gzip: bool) -> dict[str, Any]:
    from django_sitemaps_plus.serving.versions import invalidate

    headers = {"Accept-Encoding": "gzip"} if gzip else {}
    times = []
    size = 0
    for _ in range(count):
        invalidate("articles")
        elapsed, body = timed(port, PAGE, headers)
        times.append(elapsed)
        size = len(body)
    return {"median_s": statistics.median(times), "max_s": max(times), "runs": count, "bytes": size}


def cold_memory(count: int) -> dict[str, int]:
    """The peak of the Python allocations while a cold cached file renders,
    is compressed into the cache and is sent, in this process (tracemalloc;
    Django's test client, the body read chunk by chunk and not kept, as a
    server sends it): the smallest of ``count`` requests per encoding."""
    import gc
    import tracemalloc

    from django.test import Client

    from django_sitemaps_plus.serving.versions import invalidate

    client = Client(HTTP_HOST="127.0.0.1")
    peaks: dict[str, int] = {}
    for encoding in ("identity", "gzip"):
        headers = {"HTTP_ACCEPT_ENCODING": "gzip"} if encoding == "gzip" else {}
        for _ in range(count):
            invalidate("articles")
            gc.collect()
            tracemalloc.start()
            try:
                response = client.get(PAGE, **headers)
                assert response.status_code == 200, response.status_code
                # A cold file is rendered into the cache and answered from
                # the stored entry: its gzip bytes whole, a large plain body streamed.
                if response.streaming:
                    for _chunk in response.streaming_content:
                        pass
                else:
                    response.content  # noqa: B018
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            peaks[encoding] = min(peak, peaks.get(encoding, peak))
    return peaks


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def _seconds(text: str) -> float:
    match = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text.strip())
    if not match:
        raise ValueError(text)
    return float(match.group(1)) * _UNITS[match.group(2)]


def wrk(
    port: int, path: str, headers: dict[str, str], duration: int, connections: int
) -> dict[str, Any]:
    command = [
        "wrk",
        "--latency",
        "-t",
        str(min(2, connections)),
        "-c",
        str(connections),
        "-d",
        f"{duration}s",
        "--timeout",
        "30s",
    ]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    command.append(f"http://127.0.0.1:{port}{path}")
    output = subprocess.run(
        command, capture_output=True, text=True, check=True, timeout=duration + 60
    ).stdout
    return _parse_wrk(output, duration, connections)


def _parse_wrk(output: str, duration: int, connections: int) -> dict[str, Any]:
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", output).group(1))  # type: ignore[union-attr]
    latency = {
        p: _seconds(re.search(rf"^\s+{p}%\s+(\S+)", output, re.M).group(1))  # type: ignore[union-attr]
        for p in ("50", "99")
    }
    requests = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return {
        "rps": rps,
        "p50_s": latency["50"],
        "p99_s": latency["99"],
        "requests": requests,
        "errors": int(non_2xx.group(1)) if non_2xx else 0,
        "duration_s": duration,
        "connections": connections,
    }


def load(
    port: int, path: str, headers: dict[str, str], duration: int, connections: int
) -> dict[str, Any]:
    """Latency with one connection (no queueing), throughput with ``connections``."""
    alone = wrk(port, path, headers, duration, 1)
    busy = wrk(port, path, headers, duration, connections)
    return {
        "p50_s": alone["p50_s"],
        "p99_s": alone["p99_s"],
        "rps_1": alone["rps"],
        "rps": busy["rps"],
        "p99_loaded_s": busy["p99_s"],
        "requests": alone["requests"] + busy["requests"],
        "errors": alone["errors"] + busy["errors"],
        "duration_s": duration,
        "connections": connections,
    }


def cache_entry_sizes() -> dict[str, int]:
    """Bytes stored in the cache for the page (compressed) and its uncompressed size."""
    from django_sitemaps_plus.conf import get_cache
    from django_sitemaps_plus.serving.entries import Entry

    cache = get_cache()
    client = cache._cache.get_client()  # type: ignore[attr-defined]
    for raw in client.scan_iter(match="*sitemaps_plus:f:*", count=1000):
        key = raw.decode().split(":", 2)[-1]  # strip Django's key prefix "version:"
        key = key[key.index("sitemaps_plus:") :]
        if key.count(":") == 2:
            entry = Entry.from_cache(cache.get(key))
            if entry is not None and entry.size > 1_000_000:
                return {"uncompressed": entry.size, "stored": entry.gzip_size}
    return {}


def _rss_kb(field: str) -> int:
    """VmRSS or VmHWM of this process in KiB (Linux), else 0."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _reset_peak_rss() -> None:
    """Reset VmHWM to the current RSS (Linux >= 4.0), so the peak is the build's."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        pass


def build_child(mode: str, rows: int) -> None:
    """Run one build in this (fresh) process and print its figures as JSON."""
    configure(rows)
    from django.core.files.storage import FileSystemStorage
    from django.utils import timezone

    from bench.benchapp.models import Article
    from django_sitemaps_plus.build import build
    from django_sitemaps_plus.registry import site

    site.unregister("articles-comments")  # build the 1,000,000 URLs once
    target = RESULTS / "serving-build"
    if mode == "full" and target.exists():
        shutil.rmtree(target)
    changed = None
    if mode == "incremental":
        article = Article.objects.get(pk=rows // 2 + 7)
        article.updated_at = timezone.now()
        article.save()
        changed = article.pk
    baseline = _rss_kb("VmRSS")
    _reset_peak_rss()
    result = build(FileSystemStorage(location=str(target)), gzip=True)
    peak = _rss_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "mode": mode,
                "changed_pk": changed,
                "seconds": round(result.seconds, 2),
                "files": result.files,
                "urls": result.urls,
                "written": result.written,
                "skipped": len(result.skipped),
                "removed": result.removed,
                "peak_rss_kb": peak,
                "rss_before_build_kb": baseline,
                "disk_bytes": sum(p.stat().st_size for p in target.iterdir()),
            }
        )
    )


def run_build(mode: str, rows: int) -> dict[str, Any]:
    output = subprocess.run(
        [sys.executable, "-m", "bench.bench_serving", "--build-child", mode, "--rows", str(rows)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=1800,
    ).stdout
    result: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return result


# Report ---------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.2f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def markdown(result: dict[str, Any]) -> str:
    m = result
    contrib = m["contrib_render"]["median_s"]
    ours = m["ours_render"]["median_s"]
    warm_gz = m["warm_gzip"]
    warm_id = m["warm_identity"]
    nm = m["not_modified"]
    stored = int(m["cache_entry"].get("stored", 0))
    raw = int(m["cache_entry"].get("uncompressed", 0))
    errors = warm_gz["errors"] + warm_id["errors"] + nm["errors"]
    lines = [
        "# Serving benchmark: cached sitemap files",
        "",
        "Produced by `python -m bench.bench_serving` (bench/bench_serving.py); do not edit "
        "by hand.",
        "",
        f"- machine: {m['machine']}",
        f"- data: {m['rows']:,} articles (SQLite file), 50,000 URLs per file; page "
        f"`{PAGE}`: {m['ours_render']['bytes']:,} bytes uncompressed",
        f"- server: gunicorn, {m['workers']} sync workers, on 127.0.0.1; cache: Redis on "
        "127.0.0.1; load: `wrk` on the same machine (it competes with the server for the "
        f"same {os.cpu_count()} cores, so absolute rates are a floor)",
        "",
        "## One 50,000-URL page",
        "",
        "Latency: median (p50) and p99 with one connection, so no request waits for "
        "another; requests/s with "
        f"{warm_gz['connections']} connections. Uncached and cold rows: median and slowest of "
        f"{m['ours_render']['runs']} single requests (requests/s: one at a time, 1 / median; "
        "a cold file is invalidated before each).",
        "",
        "| case | p50 latency | p99 | requests/s | vs contrib render |",
        "|---|---:|---:|---:|---:|",
        f"| django.contrib.sitemaps, rendered per request | {_ms(contrib)} | "
        f"{_ms(m['contrib_render']['max_s'])} | {1 / contrib:,.2f} | 1x |",
        f"| ours, cache off (rendered per request) | {_ms(ours)} | "
        f"{_ms(m['ours_render']['max_s'])} | {1 / ours:,.2f} | {contrib / ours:,.1f}x faster |",
        f"| ours, cold cache (render + gzip + store), identity | "
        f"{_ms(m['cold_identity']['median_s'])} | {_ms(m['cold_identity']['max_s'])} | "
        f"{1 / m['cold_identity']['median_s']:,.2f} | "
        f"{contrib / m['cold_identity']['median_s']:,.1f}x faster |",
        f"| ours, cold cache, gzip | {_ms(m['cold_gzip']['median_s'])} | "
        f"{_ms(m['cold_gzip']['max_s'])} | {1 / m['cold_gzip']['median_s']:,.2f} | "
        f"{contrib / m['cold_gzip']['median_s']:,.1f}x faster |",
        f"| ours, warm cache, gzip | {_ms(warm_gz['p50_s'])} | {_ms(warm_gz['p99_s'])} | "
        f"{warm_gz['rps']:,.0f} | {contrib / warm_gz['p50_s']:,.0f}x faster |",
        f"| ours, warm cache, identity (decompressed per request) | "
        f"{_ms(warm_id['p50_s'])} | {_ms(warm_id['p99_s'])} | {warm_id['rps']:,.0f} | "
        f"{contrib / warm_id['p50_s']:,.0f}x faster |",
        f"| ours, 304 on If-None-Match (warm) | {_ms(nm['p50_s'])} | {_ms(nm['p99_s'])} | "
        f"{nm['rps']:,.0f} | |",
        "",
        f"- 304 against a full render of the same page (p50): {nm['p50_s'] / ours * 100:.2f}% "
        "of our uncached streamed render (target: under 1%), "
        f"{nm['p50_s'] / m['cold_gzip']['median_s'] * 100:.2f}% of a cold cached render "
        f"(what a miss costs), {nm['p50_s'] / contrib * 100:.3f}% of contrib's render. The "
        "304 is one cache round trip (version tokens and metadata in one `get_many`) plus "
        "Django's request handling; in-process, the view alone takes about 1 ms, most of it "
        "the Redis client.",
        f"- Warm cached page against an uncached django.contrib.sitemaps page: "
        f"{contrib / warm_gz['p50_s']:,.0f}x (gzip), {contrib / warm_id['p50_s']:,.0f}x "
        "(identity) faster by median latency (target: at least 100x).",
        f"- Cache memory for the page: {stored:,} bytes stored for {raw:,} uncompressed "
        f"({stored / max(1, raw):.1%}).",
        "- Python allocations while a cold file renders, is compressed into the cache and "
        "is sent (tracemalloc, in the harness's process through Django's test client, the "
        "body read chunk by chunk; least of the runs): "
        f"identity {m['cold_memory']['identity'] / 2**20:.1f} MiB, "
        f"gzip {m['cold_memory']['gzip'] / 2**20:.1f} MiB, for a "
        f"{raw / 2**20:.1f} MiB file.",
        f"- Load runs: {warm_gz['duration_s']} s each at 1 and at {warm_gz['connections']} "
        f"connections; non-2xx/3xx answers: {errors}; "
        f"p99 at {warm_gz['connections']} connections (queueing on {m['workers']} workers): "
        f"gzip {_ms(warm_gz['p99_loaded_s'])}, identity {_ms(warm_id['p99_loaded_s'])}, "
        f"304 {_ms(nm['p99_loaded_s'])}.",
        "",
        "## Static build of 1,000,000 URLs (`build_sitemaps --gzip` to a FileSystemStorage)",
        "",
        "| build | time | files | written | unchanged | peak RSS |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for build in (m["build_full"], m["build_incremental"]):
        lines.append(
            f"| {build['mode']} | {build['seconds']:,.1f} s | {build['files']} | "
            f"{len(build['written'])} | {build['skipped']} | "
            f"{build['peak_rss_kb'] / 1024:,.0f} MB |"
        )
    inc = m["build_incremental"]
    lines += [
        "",
        f"- Full build: {m['build_full']['urls']:,} URLs, "
        f"{m['build_full']['disk_bytes'] / 1e6:,.0f} MB on disk with the .gz copies; peak RSS "
        f"during the build {m['build_full']['peak_rss_kb'] / 1024:,.0f} MB, of which "
        f"{m['build_full']['rss_before_build_kb'] / 1024:,.0f} MB is the process with Django "
        "loaded before it: files are spooled to disk, never held whole in memory.",
        f"- Incremental rebuild after one article changed (pk {inc['changed_pk']}): wrote "
        f"{', '.join(inc['written'])}; every other file was rendered, hashed and skipped.",
        "",
    ]
    return "\n".join(lines)


def machine(workers: int) -> str:
    import django

    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"Django {django.get_version()}; load average at start {load} (other jobs on the "
        "machine widen every figure)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--renders", type=int, default=3, help="Uncached renders per case.")
    parser.add_argument("--duration", type=int, default=10, help="Seconds per wrk run.")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-doc", action="store_true", help="Do not rewrite the docs page.")
    parser.add_argument("--build-child", choices=["full", "incremental"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build_child:
        build_child(args.build_child, args.rows)
        return 0
    configure(args.rows)
    prepare(args.rows)
    result: dict[str, Any] = {"rows": args.rows, "workers": args.workers}
    result["machine"] = machine(args.workers)

    uncached = Server(cached=False, workers=args.workers)
    try:
        timed(uncached.port, PAGE)  # warm the workers' imports and SQLite pages
        timed(uncached.port, CONTRIB_PAGE)
        result["contrib_render"] = renders(uncached.port, CONTRIB_PAGE, args.renders)
        result["ours_render"] = renders(uncached.port, PAGE, args.renders)
    finally:
        uncached.stop()
    print("renders:", result["contrib_render"], result["ours_render"], file=sys.stderr)

    cached = Server(cached=True, workers=args.workers)
    try:
        result["cold_identity"] = cold(cached.port, args.renders, gzip=False)
        result["cold_gzip"] = cold(cached.port, args.renders, gzip=True)
        _, headers, _ = get(cached.port, PAGE)
        result["cache_entry"] = cache_entry_sizes()
        result["cold_memory"] = cold_memory(args.renders)
        result["warm_gzip"] = load(
            cached.port, PAGE, {"Accept-Encoding": "gzip"}, args.duration, args.connections
        )
        result["warm_identity"] = load(cached.port, PAGE, {}, args.duration, args.connections)
        result["not_modified"] = load(
            cached.port, PAGE, {"If-None-Match": headers["etag"]}, args.duration, args.connections
        )
    finally:
        cached.stop()
    print("cached:", {k: result[k] for k in ("cold_identity", "warm_gzip")}, file=sys.stderr)

    result["build_full"] = run_build("full", args.rows)
    result["build_incremental"] = run_build("incremental", args.rows)
    out = RESULTS / f"serving-{args.rows}.json"
    out.write_text(json.dumps(result, indent=1))
    report = markdown(result)
    print(report)
    if not args.no_doc:
        from bench import bench_asgi, bench_stampede

        DOC.write_text(report + bench_stampede.kept_block() + bench_asgi.kept_block())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
