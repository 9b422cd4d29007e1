"""Benchmark: django-sitemaps-plus's validator against XSD validation.

Generates a ~50 MB sitemap (50,000 URLs, each with lastmod, changefreq,
priority, five hreflang alternates and an image: a multilingual shop), then
validates it with, each in a fresh subprocess:

- ``validator``: ``django_sitemaps_plus.validation.validate`` (every rule);
- ``lxml-xsd``: lxml ``XMLSchema`` with the official sitemap.xsd (plus the
  image and XHTML schemas the file's extensions need);
- ``xmlschema``: the pure-Python ``xmlschema`` package, same schemas.

For each: wall and CPU seconds, throughput in MB/s, peak RSS (ru_maxrss of
the subprocess) and, with ``--tracemalloc``, Python's traced peak. The best
of ``--repeat`` runs is kept (``xmlschema`` runs once: it is slow); the runs
of the tools alternate, round by round.

    python bench/validate_bench.py                       # all tools
    python bench/validate_bench.py --tools validator lxml-xsd --repeat 5
    python bench/validate_bench.py --shape plain
    python bench/validate_bench.py --xsd-dir ../shared/reference/xsd

The schemas are read from ``--xsd-dir`` (default: ../shared/reference/xsd
beside the repository); they are not part of this repository.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_XSD_DIR = REPO.parent / "shared" / "reference" / "xsd"
LANGUAGES = ("en", "de", "fr", "es", "it")
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
XHTML_NS = "http://www.w3.org/1999/xhtml"


def generate_plain(path: Path, *, urls: int = 50_000) -> None:
    """50,000 URLs with loc, lastmod, changefreq and priority only (about 8 MB)."""
    with path.open("w", encoding="utf-8") as out:
        out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n')
        for number in range(urls):
            out.write(
                f"<url><loc>https://www.example.com/articles/{number:06d}-a-descriptive-slug/"
                f"</loc><lastmod>2024-{1 + number % 12:02d}-{1 + number % 28:02d}</lastmod>"
                f"<changefreq>weekly</changefreq><priority>0.{number % 9 + 1}</priority></url>\n"
            )
        out.write("</urlset>\n")


def generate(path: Path, *, groups: int = 10_000) -> None:
    """50,000 URLs: ``groups`` pages in five languages, each listing all five."""
    with path.open("w", encoding="utf-8") as out:
        out.write(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="{SITEMAP_NS}" xmlns:xhtml="{XHTML_NS}" xmlns:image="{IMAGE_NS}">\n'
        )
        for group in range(groups):
            item = f"item-{group:06d}-a-descriptive-slug-for-testing"
            slug = f"products/category-{group % 97:02d}/{item}"
            lastmod = f"2024-{1 + group % 12:02d}-{1 + group % 28:02d}T10:{group % 60:02d}:00+00:00"
            links = "".join(
                f'<xhtml:link rel="alternate" hreflang="{other}" '
                f'href="https://www.example.com/{other}/{slug}/"/>'
                for other in LANGUAGES
            )
            for language in LANGUAGES:
                out.write(
                    f"<url><loc>https://www.example.com/{language}/{slug}/</loc>"
                    f"<lastmod>{lastmod}</lastmod><changefreq>weekly</changefreq>"
                    f"<priority>0.{group % 9 + 1}</priority>{links}"
                    f"<image:image><image:loc>https://www.example.com/media/{group:06d}/"
                    f"{language}-photo-large.jpg</image:loc></image:image></url>\n"
                )
        out.write("</urlset>\n")


def driver_schema(xsd_dir: Path) -> str:
    """A schema importing the official ones the benchmark file uses."""
    imports = {
        SITEMAP_NS: "sitemap.xsd",
        IMAGE_NS: "sitemap-image.xsd",
        XHTML_NS: "xhtml1-strict.xsd",
    }
    lines = "".join(
        f'<xsd:import namespace="{namespace}" schemaLocation="{(xsd_dir / name).as_uri()}"/>'
        for namespace, name in imports.items()
    )
    return f'<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">{lines}</xsd:schema>'


# Each tool runs in its own interpreter so that ru_maxrss is its own peak.
# The script prints one JSON line; "import" is the RSS before the work.
_RUNNER = r"""
import json, resource, sys, time
tool, path, schema_text, trace = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

if tool == "validator":
    from django_sitemaps_plus.validation import validate
elif tool == "lxml-xsd":
    from lxml import etree
else:
    import xmlschema
baseline = rss()
if trace:
    import tracemalloc
    tracemalloc.start()
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu0 = usage.ru_utime + usage.ru_stime
wall0 = time.perf_counter()
if tool == "validator":
    report = validate(path, follow=False)
    verdict = report.summary()
elif tool == "lxml-xsd":
    schema = etree.XMLSchema(etree.fromstring(schema_text.encode()))
    verdict = schema.validate(etree.parse(path))
else:
    schema = xmlschema.XMLSchema(schema_text)
    verdict = schema.is_valid(path)
wall = time.perf_counter() - wall0
usage = resource.getrusage(resource.RUSAGE_SELF)
result = {
    "wall": wall,
    "cpu": usage.ru_utime + usage.ru_stime - cpu0,
    "peak_rss": rss(),
    "baseline_rss": baseline,
    "verdict": verdict,
}
if trace:
    result["traced_peak"] = tracemalloc.get_traced_memory()[1]
print(json.dumps(result))
"""


def run_tool(tool: str, path: Path, schema: str, *, trace: bool) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    completed = subprocess.run(
        [sys.executable, "-c", _RUNNER, tool, str(path), schema, "1" if trace else "0"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    result: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xsd-dir", type=Path, default=DEFAULT_XSD_DIR)
    parser.add_argument("--file", type=Path, help="validate this file instead of generating one")
    parser.add_argument("--output", type=Path, help="generate the file here and keep it")
    parser.add_argument(
        "--tools",
        nargs="+",
        choices=("validator", "lxml-xsd", "xmlschema"),
        default=["validator", "lxml-xsd", "xmlschema"],
    )
    parser.add_argument(
        "--shape",
        choices=("i18n", "plain"),
        default="i18n",
        help="i18n (default): ~50 MB, five hreflang alternates and an image per URL; "
        "plain: 50,000 URLs with the four protocol tags only",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--tracemalloc", action="store_true", help="also report Python's traced peak (slower)"
    )
    parser.add_argument("--json", type=Path, help="write the results here as JSON too")
    args = parser.parse_args()

    if not (args.xsd_dir / "sitemap.xsd").is_file():
        parser.error(f"no sitemap.xsd in {args.xsd_dir} (use --xsd-dir)")
    schema = driver_schema(args.xsd_dir.resolve())
    with tempfile.TemporaryDirectory() as scratch:
        path = args.file or args.output or Path(scratch) / f"sitemap-{args.shape}.xml"
        if args.file is None:
            (generate if args.shape == "i18n" else generate_plain)(path)
        size = path.stat().st_size
        print(f"file: {path.name}, {size:,} bytes ({size / 1e6:.1f} MB)")
        print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
        results: dict[str, dict[str, object]] = {}
        # Rounds alternate the tools, so that a change of load on a shared
        # machine weighs on all of them alike (xmlschema, slow, runs once).
        runs: dict[str, list[dict[str, object]]] = {tool: [] for tool in args.tools}
        for round_number in range(args.repeat):
            for tool in args.tools:
                if tool == "xmlschema" and round_number:
                    continue
                runs[tool].append(run_tool(tool, path, schema, trace=args.tracemalloc))
        for tool, tool_runs in runs.items():
            best = dict(min(tool_runs, key=lambda run: float(run["wall"])))  # type: ignore[arg-type]
            cpus = sorted(float(run["cpu"]) for run in tool_runs)  # type: ignore[arg-type]
            best["cpu"] = cpus[0]
            best["cpu_median"] = statistics.median(cpus)
            best["cpu_runs"] = cpus
            results[tool] = best
    reference = results.get("lxml-xsd")
    print()
    print(
        "| tool | best CPU s | median CPU s | CPU vs lxml XMLSchema (best / median) "
        "| MB/s (best wall) | peak RSS MB | RSS above import MB | verdict |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for tool, result in results.items():
        wall, cpu = float(result["wall"]), float(result["cpu"])  # type: ignore[arg-type]
        median = float(result["cpu_median"])  # type: ignore[arg-type]
        peak, baseline = int(result["peak_rss"]), int(result["baseline_rss"])  # type: ignore[call-overload]
        ratio = "n/a"
        if reference is not None:
            ratio = (
                f"{cpu / float(reference['cpu']):.2f} / "  # type: ignore[arg-type]
                f"{median / float(reference['cpu_median']):.2f}"  # type: ignore[arg-type]
            )
        print(
            f"| {tool} | {cpu:.3f} | {median:.3f} | {ratio} | {size / 1e6 / wall:.1f} "
            f"| {peak / 2**20:.0f} | {(peak - baseline) / 2**20:.0f} | {result['verdict']} |"
        )
        if "traced_peak" in result:
            traced = int(result["traced_peak"]) / 2**20  # type: ignore[call-overload]
            print(f"|   (tracemalloc peak: {traced:.1f} MB) | | | | | | | |")
    if args.json:
        args.json.write_text(json.dumps({"bytes": size, "results": results}, indent=2))


if __name__ == "__main__":
    main()
