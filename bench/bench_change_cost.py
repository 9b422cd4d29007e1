"""Cost of a change: what one save (and 1,000) costs a cached site, beside contrib.

On the core benchmark's data (``bench/seed.py``: ids 1..rows, all published),
section ``articles`` only (``url_name`` path, lastmod ``updated_at``, default
settings: files sized by their byte bound from SQL, 50,000 URLs each),
``SITEMAPS_PLUS["CACHE"]`` on and Django's local-memory cache (raised
``MAX_ENTRIES``, so nothing is culled). For each ``--rows`` size, on freshly
seeded data (a run saves rows: it never reuses another run's data):

1. the index after a cache flush (ours: every block's figures read, nothing
   rendered), beside one grouped SQL pass over the rows (the issue's
   yardstick) and contrib's ``GenericSitemap`` index (nothing to cache);
2. the index after one row saved through the ORM on a warm site (every file
   and the index cached), and the warm index for reference;
3. the files rendered by the next full crawl (the index, then every file it
   lists) after one save and after ``--saves`` scattered saves (a hook counts
   ``page_entries`` calls: one per rendered file);
4. the time of that crawl after one save and after a cache flush;
5. ``build_sitemaps --dir`` (``call_command``) full, after one changed row and
   after ``--saves`` changed rows: time, files written, files rendered;
6. steady writes (``--steady-seconds``, 0 to skip): gunicorn (gthread,
   ``--steady-workers`` x 16 threads) on 127.0.0.1 serving the same data with
   the sitemap cache in ``--cache-url`` (Redis db 6 by default: the server and
   the writer must share it), one process saving ``--saves-per-second`` rows
   through the ORM while one client loop fetches ``/sitemap.xml``: p50, p99
   and max latency, requests and failures; then contrib's ``GenericSitemap``
   index under the same writes, and ours with no writes for reference.

Times are medians of ``--repeat`` runs (each after its own save, a different
row each time); the full build and the ``--saves`` cases run once. With two
sizes or more, the table gives the growth ratio largest/smallest of each row.
The load average (1 minute) is recorded before and after each size and each
steady-writes phase: the machine may be shared.

    python -m bench.bench_change_cost --db postgres --rows 100000 1000000
    python -m bench.bench_change_cost --db sqlite --rows 1000 2000 --limit 500 --repeat 1 \
        --steady-seconds 2 --cache-url filecache:///tmp/change-cost-cache                # smoke

Results are printed and written to ``bench/results/change-cost-<db>.{md,json}``.
The database is its own (``DATABASE_URL`` overrides it): ``bench/results/
change-cost.sqlite3`` or ``postgres://postgres@127.0.0.1:5432/sitemaps_plus_bench_change``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

from bench.bench_core import (
    RESULTS_DIR,
    body,
    client,
    configure_own_database,
    consume,
    harness_arguments,
    machine,
    only_sections,
    prepare,
    write_results,
)

SECTION = "articles"
INDEX = "/sitemap.xml"
CONTRIB_INDEX = "/contrib/generic/sitemap.xml"
LOC_RE = re.compile(r"<sitemap><loc>http://testserver([^<]*)</loc>")
PG_URL = "postgres://postgres@127.0.0.1:5432/sitemaps_plus_bench_change"
CACHE_URL = "redis://127.0.0.1:6379/6"
STEADY_ROOT = RESULTS_DIR.parent.parent


# Hooks --------------------------------------------------------------------------


@contextmanager
def counting_renders() -> Iterator[list[int]]:
    """The page numbers of the files rendered meanwhile: every file the view
    or the build renders streams ``page_entries`` once."""
    from bench.benchapp.sitemaps import ArticleSection

    rendered: list[int] = []
    original = ArticleSection.page_entries

    def page_entries(self: Any, number: int, *args: Any, **kwargs: Any) -> Any:
        rendered.append(number)
        return original(self, number, *args, **kwargs)

    ArticleSection.page_entries = page_entries  # type: ignore[method-assign]
    try:
        yield rendered
    finally:
        ArticleSection.page_entries = original  # type: ignore[method-assign]


def load_average() -> float:
    """The machine's load average over the last minute."""
    return round(os.getloadavg()[0], 2)


def timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def crawl() -> dict[str, Any]:
    """The index, then every file it lists: times (s) and the files rendered."""
    with counting_renders() as rendered:
        started = time.perf_counter()
        index = body(INDEX)
        index_s = time.perf_counter() - started
        files = LOC_RE.findall(index.decode())
        for path in files:
            consume(client().get(path))
        total_s = time.perf_counter() - started
    return {"index_s": index_s, "total_s": total_s, "files": len(files), "rendered": len(rendered)}


def save(pk: int) -> None:
    """One row saved through the ORM, its lastmod column moved (signals run)."""
    from django.utils import timezone

    from bench.benchapp.models import Article

    article = Article.objects.get(pk=pk)
    article.updated_at = timezone.now()
    article.save()


def scattered(rows: int, count: int) -> list[int]:
    """``count`` keys spread evenly over 1..rows."""
    return sorted({1 + (i * rows) // count for i in range(count)})


def grouped_pass() -> None:
    """The issue's yardstick: one grouped SQL pass over the rows, each block's
    figures (count, key sum, latest lastmod) in one ``GROUP BY``."""
    from django.db import connection

    from bench.benchapp.models import Article
    from django_sitemaps_plus.registry import site

    section = site.get(SECTION)
    assert section is not None
    width = section.block_width()  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (id - 1) / %s, COUNT(*), SUM(id), MAX(updated_at) "
            f"FROM {Article._meta.db_table} WHERE is_published GROUP BY 1",
            [width],
        )
        cursor.fetchall()


def build(folder: Path, rendered: list[int]) -> dict[str, Any]:
    """``build_sitemaps --dir`` in this process: seconds, files written and rendered."""
    from django.core.management import call_command

    out = StringIO()
    before = len(rendered)
    started = time.perf_counter()
    call_command("build_sitemaps", "--dir", str(folder), "--format", "json", stdout=out)
    seconds = time.perf_counter() - started
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    return {
        "s": seconds,
        "written": len(result["written"]),
        "skipped": len(result["skipped"]),
        "rendered": len(rendered) - before,
    }


# One size -----------------------------------------------------------------------


def measure(rows: int, repeat: int, saves: int) -> dict[str, Any]:
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    r: dict[str, Any] = {"rows": rows}
    # 1. and 4.: after a cache flush (the first crawl after a deploy).
    flushed = []
    for _ in range(repeat):
        cache.clear()
        flushed.append(crawl())
    r["files"] = flushed[0]["files"]
    r["flush_index_s"] = statistics.median(c["index_s"] for c in flushed)
    r["flush_crawl_s"] = statistics.median(c["total_s"] for c in flushed)
    r["flush_rendered"] = flushed[-1]["rendered"]
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        body(INDEX)
    r["flush_index_queries"] = len(captured.captured_queries)
    r["grouped_pass_s"] = statistics.median(timed(grouped_pass) for _ in range(repeat))
    r["contrib_index_s"] = statistics.median(
        timed(lambda: body(CONTRIB_INDEX)) for _ in range(repeat)
    )
    # 2., 3. and 4.: one save on a warm site, then the next crawl.
    crawl()
    r["warm_index_s"] = statistics.median(timed(lambda: body(INDEX)) for _ in range(repeat))
    after_save = []
    for run in range(repeat):
        crawl()  # every file and the index cached
        save(rows // 2 + 7 + run)
        after_save.append(crawl())
    r["save_index_s"] = statistics.median(c["index_s"] for c in after_save)
    r["save_crawl_s"] = statistics.median(c["total_s"] for c in after_save)
    r["save_rendered"] = max(c["rendered"] for c in after_save)
    crawl()
    save(rows // 2 + 7 + repeat)
    with CaptureQueriesContext(connection) as captured:
        body(INDEX)
    r["save_index_queries"] = len(captured.captured_queries)
    # 3.: ``saves`` scattered saves, then the next crawl.
    crawl()
    keys = scattered(rows, saves)
    r["saves"] = len(keys)
    r["saves_s"] = timed(lambda: [save(pk) for pk in keys])
    many = crawl()
    r["many_index_s"] = many["index_s"]
    r["many_crawl_s"] = many["total_s"]
    r["many_rendered"] = many["rendered"]
    # 5.: builds (the site warm: its layout kept, as after the crawls above).
    # A folder of this run's own: another run (the smoke test) never empties it.
    RESULTS_DIR.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="change-cost-build-", dir=RESULTS_DIR))
    with counting_renders() as rendered:
        full = build(folder, rendered)
        one = []
        for run in range(repeat):
            save(rows // 3 + 11 + run)
            one.append(build(folder, rendered))
        for pk in scattered(rows, saves):
            save(pk)
        many_build = build(folder, rendered)
    shutil.rmtree(folder, ignore_errors=True)
    r["build_full_s"], r["build_full_written"], r["build_full_rendered"] = (
        full["s"],
        full["written"],
        full["rendered"],
    )
    r["build_one_s"] = statistics.median(b["s"] for b in one)
    r["build_one_written"] = max(b["written"] for b in one)
    r["build_one_rendered"] = max(b["rendered"] for b in one)
    r["build_many_s"] = many_build["s"]
    r["build_many_written"] = many_build["written"]
    r["build_many_rendered"] = many_build["rendered"]
    r["flush_over_grouped"] = r["flush_index_s"] / r["grouped_pass_s"]
    r["build_one_share"] = r["build_one_s"] / r["build_full_s"]
    return r


# 6. Steady writes behind gunicorn ------------------------------------------------

#: The server's WSGI application: the serving settings, section ``articles`` only.
STEADY_WSGI = """
from bench.serving.wsgi import application
from django_sitemaps_plus.registry import site

site.unregister("articles-comments")
"""


def steady_child(options: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process on the server's settings: empty the sitemap cache
    (``seconds`` 0), or save ``rate`` rows a second for ``seconds`` through
    the ORM, keys spread over the rows; what it did."""
    import django

    django.setup()
    from django.core.cache import cache

    if not options["seconds"]:
        cache.clear()
        return {}
    rows, rate, seconds = options["rows"], options["rate"], options["seconds"]
    started = time.monotonic()
    save_s = []
    done = 0
    while True:
        due = started + done / rate
        if due - started >= seconds:
            break
        time.sleep(max(0.0, due - time.monotonic()))
        pk = 1 + (done * 7919 + options["offset"]) % rows
        begun = time.perf_counter()
        save(pk)
        save_s.append(time.perf_counter() - begun)
        done += 1
    return {"saves": done, "save_p50_s": statistics.median(save_s) if save_s else 0.0}


def _steady_process(options: dict[str, Any]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.bench_change_cost", "--steady-child", json.dumps(options)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=STEADY_ROOT,
        env={
            **os.environ,
            "PYTHONPATH": str(STEADY_ROOT),
            "DJANGO_SETTINGS_MODULE": "bench.serving.settings",
        },
    )


def _steady_result(process: subprocess.Popen[str]) -> dict[str, Any]:
    stdout, _ = process.communicate(timeout=600)
    assert process.returncode == 0, f"the writer failed ({process.returncode})"
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return result


def fetch_loop(port: int, path: str, seconds: float) -> dict[str, Any]:
    """One client fetching ``path`` back to back for ``seconds``: latencies
    of the 200s, failures (another status, an error, a time-out)."""
    times: list[float] = []
    failures = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                times.append(time.perf_counter() - started)
            else:
                failures += 1
        except OSError:
            failures += 1
        finally:
            connection.close()
    times.sort()
    return {
        "requests": len(times) + failures,
        "failures": failures,
        "p50_s": statistics.median(times) if times else None,
        "p99_s": times[min(len(times) - 1, int(len(times) * 0.99))] if times else None,
        # A loop this fast makes far more requests than saves: the slow ones
        # (after a save) are under 1% of them, so the p99.9 too.
        "p999_s": times[min(len(times) - 1, int(len(times) * 0.999))] if times else None,
        "max_s": times[-1] if times else None,
    }


def steady_writes(rows: int, args: argparse.Namespace) -> dict[str, Any]:
    """Ours and contrib's index under ``--saves-per-second`` saves, ours with none."""
    from bench.bench_stampede import Server

    os.environ["BENCH_CACHE_URL"] = args.cache_url
    os.environ["SERVING_CACHE"] = "1"
    _steady_result(_steady_process({"seconds": 0}))  # another size's entries out
    r: dict[str, Any] = {"rate": args.saves_per_second, "seconds": args.steady_seconds}
    with tempfile.TemporaryDirectory() as overlay:
        Path(overlay, "steady_wsgi.py").write_text(STEADY_WSGI)
        server = Server(
            STEADY_ROOT,
            Path(overlay),
            args.steady_workers,
            16,
            settings="bench.serving.settings",
            application="steady_wsgi:application",
        )
        try:
            server.get(INDEX)  # the section laid out, the index cached
            server.get(CONTRIB_INDEX)
            r["server"] = f"gunicorn gthread {args.steady_workers} workers x 16 threads"
            r["ours_no_writes"] = fetch_loop(server.port, INDEX, args.steady_seconds)
            r["ours_no_writes"]["load"] = load_average()
            for offset, (key, path) in enumerate((("ours", INDEX), ("contrib", CONTRIB_INDEX))):
                # Each phase saves rows of its own (``offset``), at the same rate.
                writer = _steady_process(
                    {
                        "rows": rows,
                        "rate": args.saves_per_second,
                        "seconds": args.steady_seconds,
                        "offset": offset,
                    }
                )
                r[key] = fetch_loop(server.port, path, args.steady_seconds)
                r[key]["writer"] = _steady_result(writer)
                r[key]["load"] = load_average()
        finally:
            server.stop()
    return r


# Report -------------------------------------------------------------------------

#: (label, key of the figure, unit): "s" a time, "n" a count.
ROWS: list[tuple[str, str, str]] = [
    ("files in the index", "files", "n"),
    ("load average (1 min) after seeding / after the builds", "load_before_after", "load"),
    ("1. cold index (cache flushed): every block's figures read", "flush_index_s", "s"),
    ("1. queries of that index", "flush_index_queries", "n"),
    ("1. one grouped SQL pass over the rows (the issue's yardstick)", "grouped_pass_s", "s"),
    ("1. cold index / grouped pass (target <= 3x)", "flush_over_grouped", "x"),
    (
        "1. contrib `GenericSitemap` index (nothing cached; one lastmod for all)",
        "contrib_index_s",
        "s",
    ),
    ("warm index (for reference)", "warm_index_s", "s"),
    ("2. index after 1 save (warm site)", "save_index_s", "s"),
    ("2. queries of that index", "save_index_queries", "n"),
    ("3. files rendered by the next full crawl after 1 save", "save_rendered", "n"),
    (
        "3. files rendered by the next full crawl after {saves} scattered saves",
        "many_rendered",
        "n",
    ),
    ("3. index after {saves} scattered saves", "many_index_s", "s"),
    ("{saves} scattered saves through the ORM (receivers included)", "saves_s", "s"),
    ("4. full crawl (index + every file) after 1 save", "save_crawl_s", "s"),
    ("4. full crawl after {saves} scattered saves", "many_crawl_s", "s"),
    ("4. full crawl after a cache flush", "flush_crawl_s", "s"),
    ("5. `build_sitemaps` full: time", "build_full_s", "s"),
    ("5. `build_sitemaps` full: files written (index included) / rendered", "build_full", "wr"),
    ("5. `build_sitemaps` after 1 changed row: time", "build_one_s", "s"),
    ("5. `build_sitemaps` after 1 changed row: files written / rendered", "build_one", "wr"),
    ("5. build after 1 changed row / full build (target <= 5%)", "build_one_share", "%"),
    ("5. `build_sitemaps` after {saves} changed rows: time", "build_many_s", "s"),
    (
        "5. `build_sitemaps` after {saves} changed rows: files written / rendered",
        "build_many",
        "wr",
    ),
]


def _cell(r: dict[str, Any], key: str, unit: str) -> str:
    if unit == "wr":
        return f"{r[key + '_written']} / {r[key + '_rendered']}"
    if unit == "n":
        return f"{r[key]:,}"
    if unit == "load":
        return " / ".join(f"{value:.1f}" for value in r[key])
    if unit == "x":
        return f"{r[key]:.2f}x"
    if unit == "%":
        return f"{r[key] * 100:.1f}%"
    seconds = r[key]
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def _growth(first: dict[str, Any], last: dict[str, Any], key: str, unit: str) -> str:
    if unit == "load":
        return "-"
    if unit == "wr":
        key += "_rendered"
    if not first[key]:
        return "-"
    return f"{last[key] / first[key]:.1f}x"


def markdown(result: dict[str, Any]) -> str:
    sizes: list[dict[str, Any]] = result["sizes"]
    saves = sizes[0]["saves"]
    grows = len(sizes) > 1
    head = "| | " + " | ".join(f"{s['rows']:,} rows" for s in sizes)
    rule = "|---|" + "--:|" * len(sizes)
    if grows:
        head += f" | growth {sizes[-1]['rows']:,}/{sizes[0]['rows']:,}"
        rule += "--:|"
    lines = [
        f"**Cost of a change** ({result['machine']['database']}, {result['limit']:,} URLs "
        f"per file, median of {result['repeat']} runs; the full build and the "
        f"{saves:,}-save cases once)",
        "",
        head + " |",
        rule,
    ]
    for label, key, unit in ROWS:
        cells = [_cell(s, key, unit) for s in sizes]
        if grows:
            cells.append(_growth(sizes[0], sizes[-1], key, unit))
        lines.append(f"| {label.format(saves=f'{saves:,}')} | " + " | ".join(cells) + " |")
    return "\n".join(lines + steady_markdown(sizes)) + "\n"


def steady_markdown(sizes: list[dict[str, Any]]) -> list[str]:
    """The steady-writes table, when the case ran."""
    measured = [size for size in sizes if "steady" in size]
    if not measured:
        return []
    first = measured[0]["steady"]
    lines = [
        "",
        f"**The index under steady writes** ({first['server']}, one client fetching the index "
        f"back to back for {first['seconds']:g} s per line, gzip; one process saving "
        f"{first['rate']:g} rows/s through the ORM)",
        "",
        "| rows | index | writes | requests | failures | p50 | p99 | p99.9 | max | saves done "
        "| load |",
        "|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value * 1000:,.1f} ms"

    for size in measured:
        steady = size["steady"]
        for key, label, writes in (
            ("ours", "ours", f"{steady['rate']:g}/s"),
            ("contrib", "contrib `GenericSitemap`", f"{steady['rate']:g}/s"),
            ("ours_no_writes", "ours", "none"),
        ):
            f = steady[key]
            saves = f["writer"]["saves"] if "writer" in f else "-"
            lines.append(
                f"| {size['rows']:,} | {label} | {writes} | {f['requests']:,} | {f['failures']} | "
                f"{ms(f['p50_s'])} | {ms(f['p99_s'])} | {ms(f.get('p999_s'))} | "
                f"{ms(f['max_s'])} | {saves} | {f.get('load', '-')} |"
            )
    return lines


# Main ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = harness_arguments("bench.bench_change_cost", __doc__, repeat=3)
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[100_000], help="sizes (default 100,000)"
    )
    parser.add_argument("--saves", type=int, default=1000, help="scattered saves (default 1,000)")
    parser.add_argument(
        "--steady-seconds",
        type=float,
        default=30,
        help="seconds of each steady-writes phase (default 30; 0: skip the case)",
    )
    parser.add_argument(
        "--saves-per-second", type=float, default=5, help="steady writes' rate (default 5)"
    )
    parser.add_argument(
        "--steady-workers", type=int, default=2, help="gunicorn workers of 16 threads (default 2)"
    )
    parser.add_argument(
        "--cache-url",
        default=CACHE_URL,
        help=f"the sitemap cache of the server and the writer ({CACHE_URL})",
    )
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--steady-child", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.steady_child:
        print(json.dumps(steady_child(json.loads(args.steady_child))))
        return 0
    configure_own_database(args.db, PG_URL, "change-cost.sqlite3", max(args.rows), args.limit)
    from django.conf import settings
    from django.test.utils import override_settings

    result: dict[str, Any] = {
        "limit": args.limit,
        "repeat": args.repeat,
        "machine": machine(),
        "sizes": [],
    }
    cached = override_settings(
        CACHES={
            "default": {
                "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                "OPTIONS": {"MAX_ENTRIES": 1_000_000},
            }
        },
        SITEMAPS_PLUS={**settings.SITEMAPS_PLUS, "CACHE": True},
    )
    with cached, only_sections((SECTION,)):
        for rows in sorted(args.rows):
            started = time.perf_counter()
            seeded = prepare(rows, reseed=True)
            load = load_average()
            print(f"# {result['machine']['database']}, {rows:,} rows, seed: {seeded}", flush=True)
            size = measure(rows, args.repeat, args.saves)
            size["load_before_after"] = [load, load_average()]
            if args.steady_seconds:
                size["steady"] = steady_writes(rows, args)
            size["seed"] = seeded
            size["elapsed_s"] = round(time.perf_counter() - started, 1)
            print({k: round(v, 4) if isinstance(v, float) else v for k, v in size.items()})
            result["sizes"].append(size)
    write_results(
        f"change-cost-{args.db}",
        markdown(result),
        result,
        Path(args.json) if args.json else None,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
