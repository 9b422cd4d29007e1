"""The HTML sitemap for visitors on the core benchmark's data.

An HTML page is a slice of one of the section's files: it costs the section's
``index_pages()`` (to find the file) and one file's rows up to the slice's
end. This measures that on the seeded articles (``bench/seed.py``, shared
with ``bench_core``): the index alone, page 1, the last page of file 1 (the
most rows skipped), the first and the last page of the last file, and the XML
file 1 for comparison. Times are the median of ``--repeat`` runs after one
warm-up, through Django's test client, the body read whole.

    python -m bench.bench_html_sitemap --rows 1000000
    python -m bench.bench_html_sitemap --rows 2000 --limit 500 --repeat 1   # smoke
"""

from __future__ import annotations

from collections.abc import Callable

from bench.bench_core import client, consume, median_ms, seeded_data

SECTION = "articles"


def measure(repeat: int) -> list[tuple[str, float]]:
    from django.conf import settings

    from django_sitemaps_plus.registry import site as registry
    from django_sitemaps_plus.sites import site_context

    section = registry.get(SECTION)
    assert section is not None
    files = section.index_pages(site_context(None))
    size = settings.SITEMAPS_PLUS.get("HTML_SITEMAP_PAGE_SIZE", 500)
    per_file = [-(-page.url_count // size) for page in files]
    last_of_first = per_file[0]
    first_of_last = sum(per_file[:-1]) + 1
    last = sum(per_file)
    c = client()

    def get(path: str) -> Callable[[], int]:
        return lambda: consume(c.get(path))

    def html(number: int) -> str:
        return f"/sitemap/{SECTION}/" + (f"{number}/" if number > 1 else "")

    cases: list[tuple[str, Callable[[], object]]] = [
        (f"`index_pages()` of `{SECTION}` alone", lambda: section.index_pages(site_context(None))),
        (f"`{html(1)}` (page 1)", get(html(1))),
        (f"`{html(last_of_first)}` (last page of file 1)", get(html(last_of_first))),
        (f"`{html(first_of_last)}` (first page of file {len(files)})", get(html(first_of_last))),
        (f"`{html(last)}` (last page)", get(html(last))),
        (f"`/sitemap-{SECTION}-1.xml` (the whole file 1)", get(f"/sitemap-{SECTION}-1.xml")),
    ]
    return [(label, median_ms(run, repeat)) for label, run in cases]


def main() -> None:
    args = seeded_data(__doc__.split("\n", 1)[0])
    print("| request | median |\n|---|---|")
    for label, ms in measure(args.repeat):
        print(f"| {label} | {ms:,.0f} ms |")


if __name__ == "__main__":
    main()
