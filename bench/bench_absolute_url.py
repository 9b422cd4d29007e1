"""A section located by ``get_absolute_url()`` beside django.contrib.sitemaps.

Most sites will write ``ModelSection`` without ``url_name``: each location is
then the model's own ``get_absolute_url()`` (here ``reverse("article",
kwargs={"slug": ...})``), called on a model instance per row, as contrib's
``Sitemap.location()`` does. This measures that path on the core benchmark's
data (``bench/seed.py``, shared with ``bench_core``), uncached, per URL:

1. one file: contrib's ``Sitemap`` (queryset, ``lastmod()`` method, 50,000
   URLs), ours located by ``get_absolute_url()`` with default settings
   (``articles-absolute``: files sized for the default ``MAX_LOC_LENGTH``),
   the same with ``max_loc_length = 200`` so a file holds 50,000 URLs as
   contrib's does (``articles-absolute-full``), and the ``url_name`` fast path
   (``articles``) for reference;
2. the index of each of our sections over all rows (its queries counted).

Times are the median of ``--repeat`` interleaved rounds after a warm-up run
(which counts the queries and the URLs); memory is the tracemalloc peak of one
request. ``--profile`` instead profiles our default-settings file with
pyinstrument and splits its time by whose code runs: ours (location checks,
escaping, budget checks, the writer), the model's ``get_absolute_url()``
(with Django's ``reverse()``), the ORM and database, and the harness.

    python -m bench.bench_absolute_url --db sqlite --rows 1000000
    python -m bench.bench_absolute_url --db postgres --rows 1000000
    python -m bench.bench_absolute_url --db sqlite --rows 1000000 --profile
    python -m bench.bench_absolute_url --db sqlite --rows 2000 --limit 500 --repeat 1  # smoke

Results are printed and written to ``bench/results/absolute-<db>-<rows>.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.bench_core import (
    RESULTS_DIR,
    Case,
    _mb,
    _ms,
    body,
    client,
    configure,
    contrib_page_case,
    harness_arguments,
    machine,
    only_sections,
    prepare,
    time_rounds,
    tracemalloc_case,
    warm_up,
    write_results,
)

OUR_SECTIONS = ("articles-absolute", "articles-absolute-full")


def register_sections() -> None:
    """Register the ``get_absolute_url()`` sections for this run only."""
    from bench.benchapp.sitemaps import ArticleAbsoluteFullSection, ArticleAbsoluteSection
    from django_sitemaps_plus.registry import site

    for cls in (ArticleAbsoluteSection, ArticleAbsoluteFullSection):
        if cls.name not in site:
            site.register(cls)


def cases() -> list[Case]:
    return [
        contrib_page_case(),
        Case(
            "absolute-page",
            "ours, get_absolute_url(), default settings",
            "page",
            path="/sitemap-articles-absolute-1.xml",
        ),
        Case(
            "absolute-full-page",
            "ours, get_absolute_url(), max_loc_length 200",
            "page",
            path="/sitemap-articles-absolute-full-1.xml",
        ),
        Case("fast-page", "ours, url_name fast path", "page", path="/sitemap-articles-1.xml"),
        Case(
            "absolute-index",
            "ours, get_absolute_url(), default settings",
            "index",
            path="/sitemap.xml",
            sections=("articles-absolute",),
        ),
        Case(
            "absolute-index-cold",
            "ours, get_absolute_url(), default settings, after a cache flush",
            "index",
            path="/sitemap.xml",
            sections=("articles-absolute",),
            slow=True,
            cold=True,
        ),
        Case(
            "absolute-full-index",
            "ours, get_absolute_url(), max_loc_length 200",
            "index",
            path="/sitemap.xml",
            sections=("articles-absolute-full",),
        ),
        Case(
            "fast-index",
            "ours, url_name fast path",
            "index",
            path="/sitemap.xml",
            sections=("articles",),
        ),
    ]


URL_RE = re.compile(rb"<url>\s*<loc>([^<]*)</loc>")


def url_count(path: str, sections: tuple[str, ...] | None) -> int:
    with only_sections(sections):
        data = body(path)
    if b"<sitemapindex" in data:
        return data.count(b"<sitemap>")
    return len(URL_RE.findall(data))


def verify() -> dict[str, Any]:
    """Ours by ``get_absolute_url()`` writes what the ``url_name`` path writes,
    and lists contrib's URLs (page 1 of each)."""
    full = body("/sitemap-articles-absolute-full-1.xml")
    fast = body("/sitemap-articles-1.xml")
    contrib = {m.strip() for m in URL_RE.findall(body("/contrib/sitemap-articles.xml?p=1"))}
    report = {
        "absolute_full_equals_fast_path": full == fast,
        "same_urls_as_contrib": set(URL_RE.findall(full)) == contrib,
        "default_is_prefix_of_full": URL_RE.findall(body("/sitemap-articles-absolute-1.xml"))
        == URL_RE.findall(full)[: url_count("/sitemap-articles-absolute-1.xml", None)],
    }
    for key, value in report.items():
        assert value, f"verification failed: {key}"
    return report


# Profile -----------------------------------------------------------------------

PACKAGE = "/django_sitemaps_plus/"
USER = "/bench/benchapp/"


def _callee_category(path: str) -> str:
    """What a frame called from our code is (ours when it is a helper we call)."""
    if USER in path:
        return "location(): get_absolute_url() and reverse()"
    if "/django/db/" in path or "/psycopg" in path:
        return "ORM and database: rows, instances"
    if "/django/urls/" in path:
        return "location(): get_absolute_url() and reverse()"
    if "/django/" in path and "/django/utils/" not in path:
        return "Django, other"
    return "ours"  # the standard library and django.utils helpers we call


def attribute(root: Any) -> tuple[dict[str, float], dict[str, float]]:
    """Seconds per category, and per function of ours, of a pyinstrument tree.

    A frame of this package is ours; a frame it calls is classed by its file
    (the model's ``get_absolute_url`` and ``reverse()``, the ORM, or ours for
    the standard library and ``django.utils`` helpers such as ``urlsplit`` and
    ``iri_to_uri``) and everything below it keeps that class. Frames above our
    first one are the harness (test client, request handler).
    """
    categories: dict[str, float] = defaultdict(float)
    ours: dict[str, float] = defaultdict(float)
    stack: list[tuple[Any, str, str]] = [(root, "harness: test client, handler", "")]
    while stack:
        frame, inherited, our_function = stack.pop()
        path = frame.file_path or ""
        if PACKAGE in path and "/bench/" not in path:
            category = "ours"
            our_function = f"{path.split(PACKAGE)[-1]}:{frame.function}"
        elif inherited == "ours":
            category = _callee_category(path)
        else:
            category = inherited
        categories[category] += frame.total_self_time
        if category == "ours":
            ours[our_function] += frame.total_self_time
        stack.extend((child, category, our_function) for child in frame.children)
    return dict(categories), dict(ours)


def profile(path: str, repeat: int, db: str) -> dict[str, Any]:
    from pyinstrument import Profiler

    from bench.bench_core import consume

    c = client()
    consume(c.get(path))
    profiler = Profiler(interval=0.0005)
    with profiler:
        for _ in range(repeat):
            consume(c.get(path))
    session = profiler.last_session
    assert session is not None
    root = session.root_frame(trim_stem=False)
    categories, ours = attribute(root)
    total = sum(categories.values())
    print(profiler.output_text(unicode=True, color=False, show_all=False))
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"profile-absolute-{db}.html").write_text(profiler.output_html())
    ranked = sorted(categories.items(), key=lambda kv: -kv[1])
    shares = {k: round(v / total * 100, 1) for k, v in ranked}
    top_ours = {
        k: round(v / total * 100, 1)
        for k, v in sorted(ours.items(), key=lambda kv: -kv[1])[:12]
        if v / total >= 0.001
    }
    print("share of the profile (%):")
    for key, value in shares.items():
        print(f"  {value:5.1f}  {key}")
    print("ours, by function (%, with the helpers each calls):")
    for key, value in top_ours.items():
        print(f"  {value:5.1f}  {key}")
    return {
        "path": path,
        "runs": repeat,
        "seconds": round(total, 3),
        "shares": shares,
        "ours": top_ours,
    }


# Report ------------------------------------------------------------------------


def _per_url(case: Case) -> str:
    return f"{case.median / case.urls * 1e6:.1f} µs" if case.urls else "-"


def markdown(result: dict[str, Any], measured: list[Case]) -> str:
    by_key = {c.key: c for c in measured}
    contrib = by_key.get("contrib-page")
    contrib_per_url = contrib.median / contrib.urls if contrib else None
    m = result["machine"]
    lines = [
        f"### {m['database']}, {result['rows']:,} rows",
        "",
        f"{m['cpu']}, {m['memory']}; Python {m['python']}, Django {m['django']}. Median and "
        f"fastest wall time of {result['repeat']} interleaved runs after a warm-up run; CPU: "
        "median CPU time of this process. Per URL: the median over the file's URLs; "
        "vs contrib: contrib's time per URL over ours.",
        "",
        "**One file**",
        "",
        "| | URLs | median | fastest | CPU | per URL | vs contrib per URL | queries "
        "| tracemalloc peak |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for case in measured:
        if case.group != "page":
            continue
        per = case.median / case.urls if case.urls else None
        vs = f"{contrib_per_url / per:.1f}x" if per and contrib_per_url else "-"
        lines.append(
            f"| {case.label} | {case.urls:,} | {_ms(case.median)} | {_ms(case.best)} | "
            f"{_ms(case.cpu)} | {_per_url(case)} | {vs} | {case.queries} | "
            f"{_mb(case.tracemalloc_peak)} |"
        )
    index = [c for c in measured if c.group == "index"]
    if index:
        lines += [
            "",
            f"**The index of {result['rows']:,} rows**",
            "",
            "| | files | median | fastest | CPU | queries | tracemalloc peak |",
            "|---|--:|--:|--:|--:|--:|--:|",
        ]
        for case in index:
            lines.append(
                f"| {case.label} | {case.urls:,} | {_ms(case.median)} | {_ms(case.best)} | "
                f"{_ms(case.cpu)} | {case.queries} | {_mb(case.tracemalloc_peak)} |"
            )
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = harness_arguments("bench.bench_absolute_url", __doc__, repeat=5)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--only", nargs="*", help="case keys to run (default: all)")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--reseed", action="store_true")
    parser.add_argument(
        "--profile",
        nargs="?",
        const="absolute-page",
        metavar="CASE",
        help="profile one case (default absolute-page) instead of benchmarking",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configure(args.db, args.rows, args.limit)
    register_sections()
    result: dict[str, Any] = {
        "rows": args.rows,
        "limit": args.limit,
        "repeat": args.repeat,
        "seed": prepare(args.rows, args.reseed),
        "machine": machine(),
    }
    print(f"# {result['machine']['database']}, {args.rows:,} rows", flush=True)
    selected = [c for c in cases() if not args.only or c.key in args.only]
    if args.profile:
        case = next(c for c in cases() if c.key == args.profile)
        assert case.path is not None
        with only_sections(case.sections):
            result["profile"] = profile(case.path, max(1, args.repeat), args.db)
        out = RESULTS_DIR / f"profile-absolute-{args.db}-{args.rows}.json"
        out.write_text(json.dumps(result, indent=1, default=str))
        return 0
    result["verify"] = verify()
    print(f"verified: {result['verify']}", flush=True)
    started = time.perf_counter()
    for case in selected:
        warm_up(case)
        case.urls = url_count(case.path or "", case.sections)
    # The cold index renders every row: at most two runs of it.
    time_rounds(selected, args.repeat, min(args.repeat, 2))
    if not args.no_memory:
        for case in selected:
            tracemalloc_case(case)
    for case in selected:
        print(
            f"{case.key:22} {case.urls:>7,} {'URLs ' if case.group == 'page' else 'files'}  "
            f"median {_ms(case.median):>10}  "
            f"per URL {_per_url(case):>9}  queries {case.queries}",
            flush=True,
        )
    result["elapsed_s"] = round(time.perf_counter() - started, 1)
    result["cases"] = {c.key: c.as_dict() for c in selected}
    write_results(f"absolute-{args.db}-{args.rows}", markdown(result, selected), result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
