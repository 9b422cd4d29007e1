"""Fan-out builds: ``build_sitemaps`` in one process, with ``--jobs 2`` and enqueued.

On the core benchmark's data (``bench/seed.py``, section ``articles`` only:
the ``url_name`` path, lastmod ``updated_at``, files measured, 50,000 URLs
each), for each ``--rows`` size, the real command runs in a fresh process
(``--child``) with ``bench.build_settings``: the sitemap cache in
``--cache-url`` (Redis by default, shared by every process of the run),
``SITEMAPS_PLUS["CACHE"]`` on. Per size:

1. one untimed build, so the section's layout is in the cache (as on a site
   that serves its sitemaps);
2. ``--repeat`` rounds, each of ``build_sitemaps --dir <empty folder>`` with
   ``--jobs 1``, with ``--jobs 2`` (forked workers) and with ``--enqueue``
   on the Tasks framework's immediate backend (each task runs as it is
   enqueued, in the enqueuing process: what the framework's bookkeeping and
   the per-task plan, record and count cost), interleaved so a change of
   the machine's load hits each alike;
3. a build into the last one-process build's folder after one row saved
   through the ORM (``bench_change_cost.save``; files rendered counted by its
   ``counting_renders`` hook);
4. contrib's sitemap view (``Sitemap`` with a ``lastmod()`` method), through
   the test client, rendering the same files one by one: every page up to
   ``--contrib-all-up-to`` files, else ``--contrib-sample`` pages spread
   over the range, the total projected from their mean.

Per build: the command's wall time (Django's setup excluded), files, URLs,
URLs/s, the peak RSS (``VmHWM``) of the command's process (reset before the
build) and of each forked worker (read in the worker after each of its
jobs; a fork starts with its parent's resident pages, shared
copy-on-write, counted in its RSS), and the load average before and after.

    python -m bench.bench_build --db postgres --rows 1000000 10000000 --repeat 3
    python -m bench.bench_build --db sqlite --rows 2000 --limit 500 --repeat 1 \\
        --cache-url filecache:///tmp/bench-build-cache                          # smoke

Results are printed and written to ``bench/results/build-<db>-<rows>.{md,json}``.
The database is its own (``DATABASE_URL`` overrides it):
``postgres://postgres@127.0.0.1:5432/sitemaps_plus_bench_build`` or
``bench/results/build.sqlite3``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from io import StringIO
from pathlib import Path
from typing import Any

from bench.bench_core import (
    RESULTS_DIR,
    configure_own_database,
    harness_arguments,
    machine,
    prepare,
    write_results,
)
from bench.bench_serving import _reset_peak_rss, _rss_kb

ROOT = RESULTS_DIR.parent.parent
PG_URL = "postgres://postgres@127.0.0.1:5432/sitemaps_plus_bench_build"
CACHE_URL = "redis://127.0.0.1:6379/6"
SECTION = "articles"
#: (key, label, build_sitemaps options) of the timed full builds.
VARIANTS: list[tuple[str, str, list[str]]] = [
    ("jobs1", "one process (`--jobs 1`)", ["--jobs", "1"]),
    ("jobs2", "`--jobs 2` (2 forked workers)", ["--jobs", "2"]),
    ("enqueue", "`--enqueue`, immediate backend", ["--enqueue"]),
]


# In the child: one build ------------------------------------------------------


def _record_worker_peaks(directory: Path) -> None:
    """Have each forked worker write its peak RSS after each of its jobs
    (``<directory>/<pid>``: its RSS when it took its first job, and its
    VmHWM so far, the last written being its peak)."""
    from django_sitemaps_plus.build import workers

    original = workers._run_inherited
    started: dict[int, int] = {}

    def run_inherited(index: int) -> dict[str, Any]:
        started.setdefault(os.getpid(), _rss_kb("VmRSS"))
        try:
            return original(index)
        finally:
            figures = {"start_kb": started[os.getpid()], "peak_kb": _rss_kb("VmHWM")}
            (directory / str(os.getpid())).write_text(json.dumps(figures))

    # The pool pickles the function by name: the worker finds this one.
    run_inherited.__module__ = original.__module__
    run_inherited.__qualname__ = original.__qualname__
    workers._run_inherited = run_inherited  # type: ignore[assignment]


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that ended (the
    forked workers: the pool joins them before the command returns)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build_child(options: dict[str, Any]) -> dict[str, Any]:
    """One ``build_sitemaps --dir`` in this fresh process; its figures."""
    import django

    django.setup()
    from django.core.management import call_command

    from bench.bench_change_cost import counting_renders, save
    from django_sitemaps_plus.registry import site

    site.unregister("articles-comments")  # the rows once
    folder = Path(options["dir"])
    peaks = folder.parent / f"{folder.name}-workers"
    shutil.rmtree(peaks, ignore_errors=True)
    peaks.mkdir(parents=True)
    _record_worker_peaks(peaks)
    if options.get("save"):
        save(options["save"])
    out = StringIO()
    baseline = _rss_kb("VmRSS")
    _reset_peak_rss()
    cpu = _cpu_s()
    with counting_renders() as rendered:
        started = time.perf_counter()
        call_command(
            "build_sitemaps", "--dir", str(folder), "--format", "json", *options["args"], stdout=out
        )
        seconds = time.perf_counter() - started
    if options.get("workers_write_index"):
        # Task workers elsewhere build the files; the last writes the index.
        from django_sitemaps_plus.build.files import INDEX_NAME
        from django_sitemaps_plus.build.plan import PLAN_DIR

        while not (folder / INDEX_NAME).exists() or (folder / PLAN_DIR).exists():
            time.sleep(0.02)
        seconds = time.perf_counter() - started
    cpu = _cpu_s() - cpu
    report = json.loads(out.getvalue().strip().splitlines()[-1])
    workers = [json.loads(p.read_text()) for p in sorted(peaks.iterdir())]
    shutil.rmtree(peaks)
    assert (folder / "sitemap.xml").exists(), "the build wrote no index"
    return {
        "s": seconds,
        "cpu_s": cpu,
        # The files in the folder: an enqueued build reports its jobs only.
        "files": len(list(folder.glob(f"sitemap-{SECTION}-*.xml"))),
        "urls": report.get("urls"),
        "written": len(report["written"]) if "written" in report else None,
        "rendered": len(rendered),  # in this process only (not in forked workers)
        "rss_start_kb": baseline,
        "peak_rss_kb": _rss_kb("VmHWM"),
        "workers": workers,
    }


def contrib_child(options: dict[str, Any]) -> dict[str, Any]:
    """contrib's sitemap view rendering ``pages`` of the same rows, each
    written to ``dir``, through the test client in this fresh process."""
    import django

    django.setup()
    from bench.bench_core import client

    folder = Path(options["dir"])
    folder.mkdir(parents=True, exist_ok=True)
    baseline = _rss_kb("VmRSS")
    _reset_peak_rss()
    times = []
    c = client()
    for page in options["pages"]:
        started = time.perf_counter()
        response = c.get(f"/contrib/sitemap-articles.xml?p={page}")
        assert response.status_code == 200, response.status_code
        (folder / f"contrib-{page}.xml").write_bytes(response.content)
        times.append(time.perf_counter() - started)
    return {"page_s": times, "rss_start_kb": baseline, "peak_rss_kb": _rss_kb("VmHWM")}


# In the parent -----------------------------------------------------------------


def child_env(cache_url: str, tasks: str = "immediate") -> dict[str, str]:
    """The environment of every process of a run (``tasks``: immediate, rq)."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "DJANGO_SETTINGS_MODULE": "bench.build_settings",
        "BENCH_CACHE_URL": cache_url,
        "SERVING_CACHE": "1",
        "BENCH_TASKS": tasks,
    }


def run_child(
    kind: str, options: dict[str, Any], cache_url: str, tasks: str = "immediate"
) -> dict[str, Any]:
    """Run ``kind`` (build, contrib) in a fresh process; its figures, with
    the load average before and after."""
    load_before = os.getloadavg()[0]
    completed = subprocess.run(
        [sys.executable, "-m", "bench.bench_build", "--child", kind, json.dumps(options)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=child_env(cache_url, tasks),
        timeout=3600,
        check=False,
    )
    if completed.returncode:
        raise RuntimeError(f"{kind} {options} failed:\n{completed.stdout}\n{completed.stderr}")
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    result["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    return result


def forget(cache_url: str) -> None:
    """Remove the run's keys (its cache prefix, its queue) from Redis."""
    if not cache_url.startswith("redis"):
        return
    from redis import Redis

    redis = Redis.from_url(cache_url)
    for name in (os.environ["BENCH_CACHE_PREFIX"], os.environ["BENCH_RQ_QUEUE"]):
        for key in redis.scan_iter(match=f"*{name}*"):
            redis.delete(key)
    redis.srem("rq:queues", f"rq:queue:{os.environ['BENCH_RQ_QUEUE']}")


class RqWorkers:
    """``count`` RQ workers (``manage.py rqworker``) of the Tasks framework on
    the run's Redis, each forking a work horse per job (RQ's default), as
    ``tests/build/test_build_worker.py`` runs them; stopped by ``stop``."""

    def __init__(self, count: int, cache_url: str, logs: Path) -> None:
        queue = os.environ["BENCH_RQ_QUEUE"]
        command = [sys.executable, "-m", "django", "rqworker", "--job-class"]
        command += ["django_tasks_rq.Job", queue]
        self.processes = []
        for number in range(count):
            with (logs / f"rqworker-{number}.log").open("wb") as log:
                self.processes.append(
                    subprocess.Popen(
                        command,
                        env=child_env(cache_url, "rq"),
                        cwd=ROOT,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
        self.wait_idle(cache_url, queue, count)

    def wait_idle(self, cache_url: str, queue_name: str, count: int) -> None:
        from redis import Redis
        from rq import Queue, Worker

        redis = Redis.from_url(cache_url)
        queue = Queue(queue_name, connection=redis)
        deadline = time.monotonic() + 60
        while sum(w.get_state() == "idle" for w in Worker.all(connection=redis, queue=queue)) < (
            count
        ):
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.processes):
                self.stop()
                raise RuntimeError("the RQ workers did not come up")
            time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM (a warm shutdown), again (cold: an idle rq 3.0 worker may
        ignore the first), then a kill."""
        for stop, wait in ((signal.SIGTERM, 5), (signal.SIGTERM, 10), (signal.SIGKILL, 30)):
            running = [process for process in self.processes if process.poll() is None]
            for process in running:
                process.send_signal(stop)
            for process in running:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=wait)


def contrib_pages(files: int, all_up_to: int, sample: int) -> list[int]:
    if files <= all_up_to:
        return list(range(1, files + 1))
    return sorted({1 + (i * (files - 1)) // (sample - 1) for i in range(sample)})


def rounds(r: dict[str, Any], build_dir: Path, args: argparse.Namespace, rq: bool) -> None:
    """``--repeat`` rounds of every variant, each into an empty folder."""
    variants = [(key, options, {}, "immediate") for key, _, options in VARIANTS]
    if rq:
        enqueue = ["--enqueue", "--queue", os.environ["BENCH_RQ_QUEUE"]]
        variants.append(("rq", enqueue, {"workers_write_index": True}, "rq"))
    for round_ in range(args.repeat):
        for key, options, extra, tasks in variants:
            folder = build_dir / key
            shutil.rmtree(folder, ignore_errors=True)
            run = run_child(
                "build", {"dir": str(folder), "args": options, **extra}, args.cache_url, tasks
            )
            r["runs"].setdefault(key, []).append(run)
            print(
                f"{r['rows']:,} rows, {key}, round {round_ + 1}: {run['s']:.2f} s, "
                f"peak {run['peak_rss_kb'] / 1024:.0f} MB, "
                f"workers {[w['peak_kb'] // 1024 for w in run['workers']]} MB, load {run['load']}",
                flush=True,
            )


def measure(rows: int, args: argparse.Namespace) -> dict[str, Any]:
    files = -(-rows // args.limit)
    r: dict[str, Any] = {"rows": rows, "files": files, "runs": {}}
    # A cache key prefix and an RQ queue of this size's own: a fresh cache,
    # and no other run's keys or jobs.
    run = uuid.uuid4().hex[:12]
    r["cache_prefix"] = f"sitemaps-plus-bench-build-cache-{run}"
    r["rq_queue"] = f"sitemaps-plus-bench-build-{run}"
    os.environ["BENCH_CACHE_PREFIX"] = r["cache_prefix"]
    os.environ["BENCH_RQ_QUEUE"] = r["rq_queue"]
    try:
        return measure_builds(rows, args, r, files)
    finally:
        forget(args.cache_url)


def measure_builds(
    rows: int, args: argparse.Namespace, r: dict[str, Any], files: int
) -> dict[str, Any]:
    # A folder of this run's own: another run (the smoke test) never empties it.
    RESULTS_DIR.mkdir(exist_ok=True)
    build_dir = Path(tempfile.mkdtemp(prefix="build-", dir=RESULTS_DIR))
    warm = run_child("build", {"dir": str(build_dir / "warm"), "args": []}, args.cache_url)
    r["warm_up_s"] = warm["s"]
    workers = RqWorkers(args.rq_workers, args.cache_url, build_dir) if args.rq_workers else None
    try:
        rounds(r, build_dir, args, rq=workers is not None)
    finally:
        if workers is not None:
            workers.stop()
    # After one saved row: the one-process build's folder, its manifest kept.
    r["runs"]["one_change"] = [
        run_child(
            "build",
            {"dir": str(build_dir / "jobs1"), "args": ["--jobs", "1"], "save": rows // 2 + 7 + i},
            args.cache_url,
        )
        for i in range(args.repeat)
    ]
    pages = contrib_pages(files, args.contrib_all_up_to, args.contrib_sample)
    r["contrib"] = run_child(
        "contrib", {"dir": str(build_dir / "contrib"), "pages": pages}, args.cache_url
    )
    r["contrib"]["pages"] = pages
    shutil.rmtree(build_dir, ignore_errors=True)
    return r


# Report -------------------------------------------------------------------------


def summary(size: dict[str, Any]) -> dict[str, Any]:
    """Medians of each variant's runs, speed-up, overhead per file."""
    out: dict[str, Any] = {}
    for key, runs in size["runs"].items():
        seconds = statistics.median(run["s"] for run in runs)
        workers = [w["peak_kb"] for run in runs for w in run["workers"]]
        out[key] = {
            "s": seconds,
            "cpu_s": statistics.median(run["cpu_s"] for run in runs),
            "urls_per_s": size["rows"] / seconds,
            "peak_rss_mb": max(run["peak_rss_kb"] for run in runs) / 1024,
            "worker_peak_rss_mb": max(workers) / 1024 if workers else None,
            "worker_start_rss_mb": (
                max(w["start_kb"] for run in runs for w in run["workers"]) / 1024
                if workers
                else None
            ),
            "workers": max(len(run["workers"]) for run in runs),
            # An enqueued build's report says what it enqueued, not what it wrote.
            "written": None if runs[0]["written"] is None else max(r["written"] for r in runs),
            "rendered": max(run["rendered"] for run in runs),
            # The lowest and highest load average seen before or after any run.
            "load": [min(min(run["load"]) for run in runs), max(max(run["load"]) for run in runs)],
        }
    one = out["jobs1"]["s"]
    out["jobs2"]["speed_up"] = one / out["jobs2"]["s"]
    out["enqueue_overhead_per_file_s"] = (out["enqueue"]["s"] - one) / size["files"]
    if "rq" in out:
        # Against the build with as many processes: 2 RQ workers, --jobs 2.
        out["rq_overhead_per_file_s"] = (out["rq"]["s"] - out["jobs2"]["s"]) / size["files"]
        out["rq"]["speed_up"] = one / out["rq"]["s"]
    contrib = size["contrib"]
    mean = statistics.mean(contrib["page_s"])
    out["contrib"] = {
        "pages": len(contrib["pages"]),
        "page_mean_s": mean,
        "total_s": mean * size["files"],
        "projected": len(contrib["pages"]) < size["files"],
        "peak_rss_mb": contrib["peak_rss_kb"] / 1024,
    }
    return out


def _s(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"**Builds** ({m['database']}, {result['limit']:,} URLs per file, median of "
        f"{result['repeat']} runs; {m['cpu']}, {m['memory']})",
        "",
        "| rows | build | time | CPU (Python) | URLs/s | speed-up | peak RSS: command "
        "| peak RSS: each worker | files written / rendered here | load avg (min-max) |",
        "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for size in result["sizes"]:
        s = size["summary"]
        labels = [(key, label) for key, label, _ in VARIANTS]
        if "rq" in s:
            labels.append(("rq", f"`--enqueue` on {result['rq_workers']} RQ workers"))
        for key, label in [*labels, ("one_change", "after 1 saved row (`--jobs 1`)")]:
            v = s[key]
            speed = f"{v['speed_up']:.2f}x" if "speed_up" in v else ("1x" if key == "jobs1" else "")
            worker = (
                f"{v['worker_peak_rss_mb']:,.0f} MB ({v['workers']} workers, "
                f"{v['worker_start_rss_mb']:,.0f} MB at their first job)"
                if v["worker_peak_rss_mb"] is not None
                else "-"
            )
            rendered = "-" if key in ("jobs2", "rq") else str(v["rendered"])
            written = "-" if v["written"] is None else str(v["written"])
            rate = "-" if key == "one_change" else f"{v['urls_per_s']:,.0f}"
            # RQ's work horses are not this process's children.
            cpu = "-" if key == "rq" else _s(v["cpu_s"])
            lines.append(
                f"| {size['rows']:,} | {label} | {_s(v['s'])} | {cpu} | {rate} | "
                f"{speed} | "
                f"{v['peak_rss_mb']:,.0f} MB | {worker} | {written} / {rendered} | "
                f"{v['load'][0]:.1f}-{v['load'][1]:.1f} |"
            )
        c = s["contrib"]
        total = f"{_s(c['total_s'])}{' (projected)' if c['projected'] else ''}"
        lines.append(
            f"| {size['rows']:,} | contrib's view, the same {size['files']} files one by one "
            f"({c['pages']} rendered) | {total} | - | {size['rows'] / c['total_s']:,.0f} | | "
            f"{c['peak_rss_mb']:,.0f} MB | - | - | |"
        )
    lines += [
        "",
        "| rows | files | enqueued, immediate backend: (enqueued - one process) / files "
        "| enqueued on RQ workers: (RQ - `--jobs 2`) / files |",
        "|--:|--:|--:|--:|",
    ]
    for size in result["sizes"]:
        s = size["summary"]
        rq = s.get("rq_overhead_per_file_s")
        lines.append(
            f"| {size['rows']:,} | {size['files']} | "
            f"{s['enqueue_overhead_per_file_s'] * 1000:,.1f} ms | "
            f"{'-' if rq is None else f'{rq * 1000:,.1f} ms'} |"
        )
    return "\n".join(lines) + "\n"


# Main ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = harness_arguments("bench.bench_build", __doc__, repeat=3)
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[1_000_000], help="sizes (default 1,000,000)"
    )
    parser.add_argument(
        "--cache-url", default=CACHE_URL, help=f"the sitemap cache of every process ({CACHE_URL})"
    )
    parser.add_argument(
        "--contrib-all-up-to",
        type=int,
        default=20,
        help="contrib renders every file up to this many (default 20), else a sample",
    )
    parser.add_argument(
        "--contrib-sample", type=int, default=5, help="contrib's sampled pages (default 5)"
    )
    parser.add_argument(
        "--rq-workers",
        type=int,
        default=0,
        help="also build enqueued on this many RQ workers on the --cache-url Redis (default 0)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "OPTIONS"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        kind, options = args.child
        run = {"build": build_child, "contrib": contrib_child}[kind]
        print(json.dumps(run(json.loads(options))))
        return 0
    configure_own_database(args.db, PG_URL, "build.sqlite3", max(args.rows), args.limit)
    result: dict[str, Any] = {
        "limit": args.limit,
        "repeat": args.repeat,
        "cache_url": args.cache_url,
        "rq_workers": args.rq_workers,
        "machine": machine(),
        "sizes": [],
    }
    for rows in sorted(args.rows):
        started = time.perf_counter()
        seeded = prepare(rows, reseed=False)
        print(f"# {result['machine']['database']}, {rows:,} rows, seed: {seeded}", flush=True)
        size = measure(rows, args)
        size["seed"] = seeded
        size["summary"] = summary(size)
        size["elapsed_s"] = round(time.perf_counter() - started, 1)
        result["sizes"].append(size)
    sizes = "-".join(str(rows) for rows in sorted(args.rows))
    write_results(f"build-{args.db}-{sizes}", markdown(result), result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
