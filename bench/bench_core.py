"""The core engine's benchmark: django-sitemaps-plus beside django.contrib.sitemaps.

One process per database measures, on the same seeded data:

1. one 50,000-URL page: contrib's ``Sitemap`` (queryset, ``lastmod()``
   method), the naive floor (one cursor fetch of slug and updated_at, bytes
   built with ``str.join``), the same floor with the date formatted in SQL,
   and ours (``url_name`` fast path) with lastmod from ``updated_at`` and from
   ``updated_at`` + ``comments__created_at``;
2. our last full page against our page 1 (keyset pagination);
3. the index: ours (true per-file lastmod) against contrib's index of the
   sitemap with a ``lastmod()`` method and of a ``GenericSitemap``.

Every view is called through Django's test client, consuming the streamed
body. Times are the median of ``--repeat`` runs after one warm-up run (which
also counts the queries); memory is the tracemalloc peak during one request
and, in a fresh subprocess per case, the growth of the peak RSS over idle.

    python -m bench.bench_core --db sqlite --rows 1000000
    python -m bench.bench_core --db postgres --rows 1000000
    python -m bench.bench_core --db sqlite --rows 60000 --repeat 1   # smoke

Results are printed and written to ``bench/results/core-<db>-<rows>.{md,json}``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
PG_DEFAULT = "postgres://postgres@127.0.0.1:5432/sitemaps_plus_bench_{rows}"
HOST = "http://testserver"


# Setup -------------------------------------------------------------------------


def configure(db: str, rows: int, limit: int) -> None:
    """Point the settings at the benchmark database, then set Django up."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ["BENCH_LIMIT"] = str(limit)
    if not os.environ.get("DATABASE_URL"):
        if db == "postgres":
            os.environ["DATABASE_URL"] = PG_DEFAULT.format(rows=rows)
        else:
            RESULTS_DIR.mkdir(exist_ok=True)
            os.environ["DATABASE_URL"] = f"sqlite:///{RESULTS_DIR / f'bench-{rows}.sqlite3'}"
    if os.environ["DATABASE_URL"].startswith(("postgres", "pgsql")):
        _create_pg_database(os.environ["DATABASE_URL"])
    import django

    django.setup()


def configure_own_database(db: str, pg_url: str, sqlite_name: str, rows: int, limit: int) -> None:
    """``configure`` on a harness's own database (one that saves rows never
    touches the core benchmark's data): ``pg_url`` on PostgreSQL, else
    ``bench/results/<sqlite_name>``; ``DATABASE_URL`` overrides both."""
    if not os.environ.get("DATABASE_URL"):
        RESULTS_DIR.mkdir(exist_ok=True)
        os.environ["DATABASE_URL"] = (
            pg_url if db == "postgres" else f"sqlite:///{RESULTS_DIR / sqlite_name}"
        )
    configure(db, rows, limit)


def _create_pg_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    name = url.rsplit("/", 1)[1].split("?", 1)[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def prepare(rows: int, reseed: bool) -> dict[str, Any]:
    """Migrate and seed (unless the tables already hold this data set)."""
    from django.core.management import call_command

    from bench import seed

    call_command("migrate", verbosity=0)
    if not reseed and seed.is_seeded(rows):
        return {"reused": True}
    timings = seed.seed(rows)
    return {"reused": False, **{k: round(v, 2) for k, v in timings.items()}}


def machine() -> dict[str, str]:
    import django
    from django.db import connection

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SHOW server_version")
            db_version = f"PostgreSQL {cursor.fetchone()[0]}"
        else:
            cursor.execute("SELECT sqlite_version()")
            db_version = f"SQLite {cursor.fetchone()[0]}"
    memory = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpu": f"{cpu} x {os.cpu_count()}",
        "memory": memory,
        "python": platform.python_version(),
        "django": django.get_version(),
        "database": db_version,
    }


# Requests ----------------------------------------------------------------------


def median_ms(run: Callable[[], object], repeat: int) -> float:
    """The median of ``repeat`` timed calls of ``run``, after one untimed, in ms."""
    run()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def seeded_data(description: str) -> argparse.Namespace:
    """The smaller benchmarks' command line (``--db --rows --limit --repeat``):
    parse it, set Django up on the seeded data and say what it is."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--rows", type=int, default=1_000_000, help="articles (default 1,000,000)")
    parser.add_argument("--limit", type=int, default=50_000, help="URLs per file (default 50,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per case (default 3)")
    args = parser.parse_args()
    configure(args.db, args.rows, args.limit)
    prepare(args.rows, reseed=False)
    print(f"{args.rows:,} articles, files of {args.limit:,} URLs, {args.db}")
    return args


def client() -> Any:
    from django.test import Client

    return Client(raise_request_exception=True)


def consume(response: Any) -> int:
    """Read the body as a WSGI server would; its length in bytes."""
    assert response.status_code == 200, response.status_code
    if response.streaming:
        return sum(len(chunk) for chunk in response.streaming_content)
    return len(response.content)


def body(path: str) -> bytes:
    response = client().get(path)
    assert response.status_code == 200, (path, response.status_code)
    if response.streaming:
        return b"".join(response.streaming_content)
    return bytes(response.content)


@contextmanager
def only_sections(names: tuple[str, ...] | None) -> Iterator[None]:
    """Register only ``names`` for the duration (ours index lists every section)."""
    from django_sitemaps_plus.registry import site

    if names is None:
        yield
        return
    saved = dict(site._registry)
    site._registry.clear()
    site._registry.update({name: saved[name] for name in names})
    try:
        yield
    finally:
        site._registry.clear()
        site._registry.update(saved)


# The floors ---------------------------------------------------------------------

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
TAIL = "</urlset>\n"


def _page_rows(page: int, limit: int, lastmod_sql: str) -> list[tuple[Any, ...]]:
    from django.db import connection

    from bench.benchapp.models import Article

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT slug, {lastmod_sql} FROM {Article._meta.db_table} "
            "WHERE is_published AND id > %s AND id <= %s ORDER BY id",
            [(page - 1) * limit, page * limit],
        )
        return cursor.fetchall()


def naive_floor(page: int, limit: int) -> bytes:
    """One cursor fetch of slug and updated_at; the date formatted in Python."""
    rows = _page_rows(page, limit, "updated_at")
    base = f"{HOST}/articles/"
    return (
        HEAD
        + "".join(
            [
                f"<url><loc>{base}{slug}/</loc><lastmod>{updated:%Y-%m-%dT%H:%M:%SZ}</lastmod></url>\n"
                for slug, updated in rows
            ]
        )
        + TAIL
    ).encode()


def sql_floor(page: int, limit: int) -> bytes:
    """The same, with the W3C date text formatted by the database."""
    from django.db import connection

    if connection.vendor == "postgresql":
        lastmod = "to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
    else:
        lastmod = "strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', updated_at)"
    rows = _page_rows(page, limit, lastmod)
    base = f"{HOST}/articles/"
    return (
        HEAD
        + "".join(
            [
                f"<url><loc>{base}{slug}/</loc><lastmod>{updated}</lastmod></url>\n"
                for slug, updated in rows
            ]
        )
        + TAIL
    ).encode()


# Cases --------------------------------------------------------------------------


@dataclass
class Case:
    key: str
    label: str
    group: str  # "page", "pagination", "index"
    path: str | None = None  # a view, through the test client
    func: Callable[[], bytes] | None = None  # a floor, called directly
    sections: tuple[str, ...] | None = None
    slow: bool = False
    #: Empty the cache before each run: the measured blocks and the layout
    #: are computed anew, as on the first request after a deploy.
    cold: bool = False
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)
    queries: int | None = None
    size: int = 0
    tracemalloc_peak: int | None = None
    rss_delta: int | None = None
    #: URLs (or, for an index, files) in the response, where a harness counts them.
    urls: int = 0

    def run(self, c: Any) -> int:
        if self.func is not None:
            return len(self.func())
        assert self.path is not None
        if self.cold:
            from django.core.cache import cache

            cache.clear()
        with only_sections(self.sections):
            return consume(c.get(self.path))

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "group": self.group,
            "urls": self.urls,
            "times_ms": [round(t * 1000, 2) for t in self.times],
            "median_ms": round(self.median * 1000, 2),
            "min_ms": round(self.best * 1000, 2),
            "cpu_ms": [round(t * 1000, 2) for t in self.cpu_times],
            "queries": self.queries,
            "bytes": self.size,
            "tracemalloc_peak": self.tracemalloc_peak,
            "rss_delta": self.rss_delta,
        }

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_times)


def contrib_page_case() -> Case:
    """contrib's first 50,000-URL file, the reference of every page table."""
    return Case(
        "contrib-page",
        "contrib Sitemap, lastmod() method",
        "page",
        path="/contrib/sitemap-articles.xml?p=1",
    )


def cases(rows: int, limit: int) -> list[Case]:
    last = max(1, -(-rows // limit))  # the last file, partial or full
    return [
        contrib_page_case(),
        Case(
            "naive-floor",
            "naive floor (cursor + str.join)",
            "page",
            func=lambda: naive_floor(1, limit),
        ),
        Case("sql-floor", "floor, date formatted in SQL", "page", func=lambda: sql_floor(1, limit)),
        Case("ours-page", "ours, lastmod updated_at", "page", path="/sitemap-articles-1.xml"),
        Case(
            "ours-page-comments",
            "ours, lastmod updated_at + comments__created_at",
            "page",
            path="/sitemap-articles-comments-1.xml",
        ),
        Case(
            "ours-page-last",
            f"ours, page {last} (updated_at)",
            "pagination",
            path=f"/sitemap-articles-{last}.xml",
        ),
        Case(
            "ours-index",
            "ours, true per-file lastmod (updated_at)",
            "index",
            path="/sitemap.xml",
            sections=("articles",),
        ),
        Case(
            "ours-index-cold",
            "ours, the same after a cache flush (every block measured)",
            "index",
            path="/sitemap.xml",
            sections=("articles",),
            slow=True,
            cold=True,
        ),
        Case(
            "ours-index-comments",
            "ours, true per-file lastmod (+ comments)",
            "index",
            path="/sitemap.xml",
            sections=("articles-comments",),
        ),
        Case(
            "contrib-index",
            "contrib, Sitemap with lastmod() method",
            "index",
            path="/contrib/sitemap.xml",
            slow=True,
        ),
        Case(
            "contrib-generic-index",
            "contrib, GenericSitemap (lastmod wrong)",
            "index",
            path="/contrib/generic/sitemap.xml",
        ),
    ]


def warm_up(case: Case) -> None:
    """Two unmeasured runs: the first as a cold start does (it lays the
    section out and keeps its layout and measured blocks in the cache, as
    every deployment's first request does), the second to count the queries
    of the steady state that the timed rounds measure."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    case.run(client())
    with CaptureQueriesContext(connection) as captured:
        case.size = case.run(client())
    case.queries = None if case.func is not None else len(captured.captured_queries)


def time_rounds(selected: list[Case], repeat: int, slow_repeat: int) -> None:
    """``repeat`` rounds over all cases, interleaved, so a load change on the
    machine affects every case alike rather than whichever ran then. Cold
    cases (which empty the cache) run after the others, so that every other
    case is timed in its steady state."""
    c = client()
    warm = [case for case in selected if not case.cold]
    cold = [case for case in selected if case.cold]
    for group in (warm, cold):
        _rounds(c, group, repeat, slow_repeat)
    # The cold cases left the cache empty of what the others keep.
    for case in warm:
        case.run(c)


def _rounds(c: Any, selected: list[Case], repeat: int, slow_repeat: int) -> None:
    for round_ in range(max(repeat, slow_repeat)):
        for case in selected:
            if round_ >= (slow_repeat if case.slow else repeat):
                continue
            gc.collect()
            cpu = time.process_time()
            started = time.perf_counter()
            case.run(c)
            case.times.append(time.perf_counter() - started)
            case.cpu_times.append(time.process_time() - cpu)


def tracemalloc_case(case: Case) -> None:
    c = client()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        case.run(c)
        case.tracemalloc_peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def _status_kb(key: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_probe(key: str, rows: int, limit: int) -> dict[str, int]:
    """In a fresh process: the peak RSS growth (bytes) of one request over idle.

    Linux's VmHWM (the peak RSS) is reset to the current RSS first, through
    /proc/self/clear_refs; ``ru_maxrss`` cannot be used, as it keeps the
    parent's peak across fork and exec.
    """
    case = next(c for c in cases(rows, limit) if c.key == key)
    from django.db import connection

    c = client()
    connection.ensure_connection()
    c.get("/articles/warm-up/")  # the handler, URLconf and sections are loaded
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
        idle = _status_kb("VmRSS")
    except OSError:
        idle = None
    if idle is None:  # not Linux: the peak so far stands for idle
        idle = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    case.run(c)
    peak = _status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"idle": idle * 1024, "delta": (peak - idle) * 1024}


def rss_case(case: Case, args: argparse.Namespace) -> None:
    command = [
        sys.executable,
        "-m",
        "bench.bench_core",
        "--db",
        args.db,
        "--rows",
        str(args.rows),
        "--limit",
        str(args.limit),
        "--rss-probe",
        case.key,
    ]
    out = subprocess.run(
        command, check=True, capture_output=True, text=True, cwd=BENCH_DIR.parent, env=os.environ
    )
    case.rss_delta = json.loads(out.stdout.strip().splitlines()[-1])["delta"]


# Verification ------------------------------------------------------------------

URL_RE = re.compile(r"<url><loc>([^<]*)</loc>(?:<lastmod>([^<]*)</lastmod>)?")
# The comment: the URL count the styled view shows (xml.stream_index).
INDEX_RE = re.compile(
    r"<sitemap><loc>([^<]*)</loc>(?:<lastmod>([^<]*)</lastmod>)?(?:<!--[^>]*-->)?</sitemap>"
)


def _urls(xml: bytes) -> list[tuple[str, str | None]]:
    # contrib's template puts whitespace between elements: drop it first.
    text = re.sub(r">\s+<", "><", xml.decode())
    return [(m[1], m[2]) for m in URL_RE.finditer(text)]


def _our_files(section: str) -> list[dict[str, Any]]:
    """Our index's files of ``section`` with their lastmod and their URLs."""
    with only_sections((section,)):
        index = body("/sitemap.xml").decode()
    files = []
    for loc, lastmod in INDEX_RE.findall(index):
        urls = _urls(body(loc.removeprefix(HOST)))
        files.append(
            {
                "loc": loc,
                "lastmod": lastmod or None,
                "max_in_file": max((m for _, m in urls if m), default=None),
                "urls": urls,
            }
        )
    return files


def _contrib_urls(pages: int) -> list[tuple[str, str | None]]:
    urls: list[tuple[str, str | None]] = []
    for page in range(1, pages + 1):
        urls += _urls(body(f"/contrib/sitemap-articles.xml?p={page}"))
    return urls


def verify(rows: int, limit: int, full: bool) -> dict[str, Any]:
    """Check ours against contrib and the floors; raise AssertionError on a mismatch.

    ``full``: every page and file (small data sets); else page 1 and the index.
    """
    from django.db.models import Max

    from bench.benchapp.models import Article
    from django_sitemaps_plus.engine.xml import stylesheet_instruction

    report: dict[str, Any] = {}
    # The floors write the protocol's bytes; ours also names the stylesheet.
    ours_page1 = body("/sitemap-articles-1.xml").replace(
        stylesheet_instruction("/sitemap.xsl").encode(), b"", 1
    )
    report["floors_equal_ours"] = (
        naive_floor(1, limit) == ours_page1 and sql_floor(1, limit) == ours_page1
    )
    assert report["floors_equal_ours"], "the floors' bytes differ from our page 1"

    pages = -(-rows // limit) if full else 1
    contrib = _contrib_urls(pages)
    if full:
        files = _our_files("articles")
        ours = [u for f in files for u in f["urls"]]
    else:
        ours = _urls(ours_page1)
        with only_sections(("articles",)):
            index = INDEX_RE.findall(body("/sitemap.xml").decode())
        files = [
            {
                "loc": index[0][0],
                "lastmod": index[0][1],
                "max_in_file": max(m for _, m in ours if m),
            }
        ]
    report["ours_urls"] = len(ours)
    report["contrib_urls"] = len(contrib)
    report["same_urls"] = {u for u, _ in ours} == {u for u, _ in contrib}
    # contrib's template writes dates only ("Y-m-d"); ours full UTC datetimes.
    contrib_dates = dict(contrib)
    report["same_lastmod_dates"] = all(
        (m or "")[:10] == (contrib_dates.get(u) or "") for u, m in ours
    )
    report["index_files"] = [
        {
            "section": "articles",
            "loc": f["loc"],
            "lastmod": f["lastmod"],
            "max_in_file": f["max_in_file"],
        }
        for f in files
    ]
    if full:
        # With comments: each URL's lastmod is the latest of updated_at and
        # its comments' created_at, computed here with the ORM.
        comment_files = _our_files("articles-comments")
        expected = {
            f"{HOST}/articles/{slug}/": max(u, c) if c else u
            for slug, u, c in Article.objects.annotate(c=Max("comments__created_at"))
            .values_list("slug", "updated_at", "c")
            .iterator()
        }
        report["comments_lastmod_correct"] = all(
            m == expected[u].strftime("%Y-%m-%dT%H:%M:%SZ")
            for f in comment_files
            for u, m in f["urls"]
        )
        report["index_files"] += [
            {
                "section": "articles-comments",
                "loc": f["loc"],
                "lastmod": f["lastmod"],
                "max_in_file": f["max_in_file"],
            }
            for f in comment_files
        ]
        if rows <= 10_000:
            report["ours_url_list"] = sorted(u for u, _ in ours)
            report["contrib_url_list"] = sorted(u for u, _ in contrib)
    for key in ("same_urls", "same_lastmod_dates", "comments_lastmod_correct"):
        assert report.get(key, True), f"verification failed: {key}"
    for f in report["index_files"]:
        assert f["lastmod"] == f["max_in_file"], f"index lastmod of {f['loc']} is not its max"
    return report


# Report ------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.0095 else f"{seconds * 1000:.1f} ms"


def _mb(value: int | None) -> str:
    return "-" if value is None else f"{value / 1024 / 1024:.1f} MB"


def _times(case: Case) -> str:
    return f"{_ms(case.median)} | {_ms(case.best)} | {_ms(case.cpu)}"


def _ratio(numerator: float, denominator: float, faster: bool = False) -> str:
    ratio = numerator / denominator
    return f"{ratio:.1f}x faster" if faster else f"{ratio:.2f}x"


def _vs(numerator: Case | None, denominator: Case | None, faster: bool = False) -> str:
    if numerator is None or denominator is None:
        return "-"
    if numerator is denominator:
        return "1x"
    return _ratio(numerator.median, denominator.median, faster)


def markdown(result: dict[str, Any], measured: list[Case]) -> str:
    by_key = {c.key: c for c in measured}
    contrib = by_key.get("contrib-page")
    naive = by_key.get("naive-floor")
    floor = by_key.get("sql-floor")
    lines = [
        f"### {result['machine']['database']}, {result['rows']:,} rows",
        "",
        f"{result['machine']['cpu']}, {result['machine']['memory']}; Python "
        f"{result['machine']['python']}, Django {result['machine']['django']}. Wall time: "
        f"median and fastest of {result['repeat']} runs (contrib's lastmod index: "
        f"{result['slow_repeat']}), the cases interleaved round by round, after a warm-up "
        "run; CPU: median CPU time of this process (on PostgreSQL the server's work is not "
        "in it). Ratios are of the medians. Memory: tracemalloc peak during one request / "
        "growth of the peak RSS over idle in a fresh process.",
        "",
        "**One 50,000-URL page**",
        "",
        "| | median | fastest | CPU | vs contrib | vs naive floor | vs SQL floor | queries "
        "| tracemalloc peak | RSS growth |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for case in measured:
        if case.group != "page":
            continue
        lines.append(
            f"| {case.label} | {_times(case)} | "
            f"{_vs(contrib, case, True)} | {_vs(case, naive)} | {_vs(case, floor)} | "
            f"{'-' if case.queries is None else case.queries} | "
            f"{_mb(case.tracemalloc_peak)} | {_mb(case.rss_delta)} |"
        )
    first = by_key.get("ours-page")
    last = by_key.get("ours-page-last")
    if first and last:
        lines += [
            "",
            "**Keyset pagination: last page vs page 1**",
            "",
            "| | median | fastest | CPU | vs page 1 | queries |",
            "|---|--:|--:|--:|--:|--:|",
            f"| {first.label} (page 1) | {_times(first)} | 1x | {first.queries} |",
            f"| {last.label} | {_times(last)} | {_ratio(last.median, first.median)} | "
            f"{last.queries} |",
        ]
    index_cases = [c for c in measured if c.group == "index"]
    slow = by_key.get("contrib-index")
    generic = by_key.get("contrib-generic-index")
    if index_cases:
        lines += [
            "",
            f"**The index of {result['rows']:,} rows ({result['files']} files)**",
            "",
            "| | median | fastest | CPU | vs contrib with lastmod() | vs GenericSitemap "
            "| queries | tracemalloc peak | RSS growth |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for case in index_cases:
            lines.append(
                f"| {case.label} | {_times(case)} | "
                f"{_vs(slow, case, True)} | {_vs(case, generic)} | "
                f"{case.queries} | {_mb(case.tracemalloc_peak)} | {_mb(case.rss_delta)} |"
            )
    seed = result.get("seed", {})
    if not seed.get("reused", True):
        lines += ["", f"Seeding: load {seed['load']:.1f} s, analyze {seed['analyze']:.1f} s."]
    if "verify" in result:
        v = result["verify"]
        lines += [
            "",
            f"Checked: ours lists the same URLs as contrib ({v['ours_urls']:,} compared), with "
            "the same lastmod dates; the floors' bytes equal our page 1; each index lastmod "
            "is the latest lastmod in its file.",
        ]
    return "\n".join(lines) + "\n"


# Main --------------------------------------------------------------------------


def harness_arguments(module: str, doc: str | None, repeat: int) -> argparse.ArgumentParser:
    """A harness's command line: ``--db``, ``--limit`` and ``--repeat``, its
    module docstring as the help."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--db",
        choices=["sqlite", "postgres"],
        default="sqlite",
        help="database (DATABASE_URL overrides the default URL of each)",
    )
    parser.add_argument("--limit", type=int, default=50_000, help="URLs per file (default 50,000)")
    parser.add_argument(
        "--repeat", type=int, default=repeat, help=f"timed runs per case (default {repeat})"
    )
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = harness_arguments("bench.bench_core", __doc__, repeat=5)
    parser.add_argument("--rows", type=int, default=1_000_000, help="articles (default 1,000,000)")
    parser.add_argument(
        "--slow-repeat",
        type=int,
        default=None,
        help="timed runs of contrib's lastmod() index (default: --repeat, at most 3)",
    )
    parser.add_argument("--only", nargs="*", help="case keys to run (default: all)")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory runs")
    parser.add_argument(
        "--verify",
        choices=["auto", "full", "page", "none"],
        default="auto",
        help="check ours against contrib: every page (full, the default up to "
        "100,000 rows) or page 1 and the index (page)",
    )
    parser.add_argument("--reseed", action="store_true", help="reload the data even if present")
    parser.add_argument(
        "--profile",
        metavar="CASE",
        help="profile one case with pyinstrument instead of benchmarking",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--rss-probe", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.slow_repeat is None:
        args.slow_repeat = min(args.repeat, 3)
    configure(args.db, args.rows, args.limit)
    if args.rss_probe:
        print(json.dumps(rss_probe(args.rss_probe, args.rows, args.limit)))
        return 0

    from django.db import connection

    from django_sitemaps_plus.registry import site

    started = time.perf_counter()
    result: dict[str, Any] = {
        "db": connection.vendor,
        "rows": args.rows,
        "limit": args.limit,
        "files": -(-args.rows // args.limit),
        "repeat": args.repeat,
        "slow_repeat": args.slow_repeat,
        "seed": prepare(args.rows, args.reseed),
        "machine": machine(),
    }
    print(
        f"# {result['machine']['database']}, {args.rows:,} rows, seed: {result['seed']}", flush=True
    )
    for name in ("articles", "articles-comments"):
        section = site.get(name)
        assert section is not None
        # Files as full as contrib's: the first holds the limit (or every row).
        from django_sitemaps_plus.sites import SiteContext

        listed = section.site_queryset(None).count()  # type: ignore[attr-defined]
        files = section.index_pages(SiteContext("http://testserver"))
        assert files and files[0].url_count == min(args.limit, listed), (
            f"section {name!r}'s first file holds {files and files[0].url_count} URLs, "
            f"not {min(args.limit, listed)}"
        )
    selected = [c for c in cases(args.rows, args.limit) if not args.only or c.key in args.only]

    if args.profile:
        return profile(next(c for c in selected if c.key == args.profile), args)

    mode = args.verify
    if mode == "auto":
        mode = "full" if args.rows <= 100_000 else "page"
    if mode != "none":
        result["verify"] = verify(args.rows, args.limit, full=mode == "full")
        print(f"verified ({mode}): {result['verify']['ours_urls']:,} URLs", flush=True)

    for case in selected:
        warm_up(case)
    time_rounds(selected, args.repeat, args.slow_repeat)
    for case in selected:
        print(
            f"{case.key:24} median {_ms(case.median):>10}  min {_ms(case.best):>10}  "
            f"cpu {_ms(case.cpu):>10}  queries {case.queries}",
            flush=True,
        )
    if not args.no_memory:
        for case in selected:
            tracemalloc_case(case)
            rss_case(case, args)
            print(
                f"{case.key:24} tracemalloc {_mb(case.tracemalloc_peak):>9}  "
                f"RSS +{_mb(case.rss_delta):>9}",
                flush=True,
            )

    result["cases"] = {c.key: c.as_dict() for c in selected}
    result["elapsed_s"] = round(time.perf_counter() - started, 1)
    write_results(f"core-{args.db}-{args.rows}", markdown(result, selected), result, args.json)
    return 0


def write_results(stem_name: str, table: str, result: dict[str, Any], extra: Path | None) -> None:
    """Print the table; write it and the JSON to ``bench/results/<stem_name>``
    (and the JSON to ``extra`` too, when given)."""
    print()
    print(table)
    RESULTS_DIR.mkdir(exist_ok=True)
    stem = RESULTS_DIR / stem_name
    stem.with_suffix(".md").write_text(table)
    text = json.dumps(result, indent=1, default=str)
    stem.with_suffix(".json").write_text(text)
    if extra:
        extra.write_text(text)


def profile(case: Case, args: argparse.Namespace) -> int:
    from pyinstrument import Profiler

    c = client()
    case.run(c)
    profiler = Profiler(interval=0.0005)
    with profiler:
        for _ in range(max(1, args.repeat)):
            case.run(c)
    print(profiler.output_text(unicode=True, color=False, show_all=False))
    RESULTS_DIR.mkdir(exist_ok=True)
    out = RESULTS_DIR / f"profile-{args.db}-{case.key}.html"
    out.write_text(profiler.output_html())
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
