"""The batch fast path (compiled XPath over uniform entries) finds exactly what
the general path finds: same findings, lines, columns, URLs and order, on
files mixing plain entries with every kind of irregularity, fed in chunks of
many sizes so that batches start and end anywhere."""

from __future__ import annotations

import datetime as dt
import io
import random

import pytest

from django_sitemaps_plus import protocol
from django_sitemaps_plus.validation import batch, engine, validate
from django_sitemaps_plus.validation.parser import XmlChecker

NOW = dt.datetime(2026, 1, 15, 12, 0, tzinfo=dt.timezone.utc)
SITE = "https://example.com"
LANGUAGES = ("en", "de", "fr")

# Irregular variants of one entry; {n} is the entry's number, {loc} its URL.
ODDITIES = (
    "<url><loc> {loc} </loc><lastmod>2025-01-01</lastmod></url>",
    "<url><loc>{loc}</loc><lastmod>2030-01-01</lastmod></url>",
    "<url><loc>{loc}</loc><lastmod>2025-13-01</lastmod></url>",
    "<url><loc>{loc}</loc><lastmod>2025-01-01T10:00</lastmod></url>",
    "<url><loc>{loc}</loc><lastmod> 2025-01-01</lastmod></url>",
    "<url><loc>{loc}</loc><changefreq>sometimes</changefreq></url>",
    "<url><loc>{loc}</loc><priority>1.5</priority></url>",
    "<url><loc>{loc}</loc><priority> 0.5</priority></url>",
    "<url><lastmod>2025-01-01</lastmod><loc>{loc}</loc></url>",
    "<url><loc>{loc}</loc><loc>{loc}x</loc></url>",
    "<url><lastmod>2025-01-01</lastmod></url>",
    "<url><loc></loc></url>",
    "<url>text<loc>{loc}</loc></url>",
    "<url><loc>{loc}</loc><foo>1</foo></url>",
    "<url><loc>{loc}</loc><!-- c --><lastmod>2025-01-01</lastmod></url>",
    "<url><loc><![CDATA[{loc}]]></loc></url>",
    "<url><loc>{loc}<![CDATA[/x]]></loc></url>",
    "<url><loc>http://other.example.com/{n}</loc></url>",
    "<url><loc>{loc}?utm_source=x&amp;sort=1</loc></url>",
    "<url><loc>{loc}/caf\u00e9</loc></url>",
    "<url><loc>{loc}/sitemap-2.xml</loc></url>",
    "<url><loc>/relative/{n}</loc></url>",
    "<url><loc>" + SITE + "/" + "a" * 1100 + "{n}</loc></url>",
    "<url><loc>" + SITE + "/dup</loc></url>",
    "<sitemap><loc>{loc}</loc></sitemap>",
    "<stray>{n}</stray>",
    "<foo><url><loc>{loc}</loc></url></foo>",
    "<urlset/>",
    "<other:thing xmlns:other='urn:x'>{n}</other:thing>",
    "<url><loc>{loc}</loc><image:image><image:loc>{loc}.jpg</image:loc>"
    "<image:caption>c</image:caption></image:image></url>",
    "<url><loc>{loc}</loc><image:image><image:title>t</image:title></image:image></url>",
    "<url><loc>{loc}</loc><image:image><image:loc>not a url</image:loc></image:image></url>",
    "<url><loc>{loc}</loc><xhtml:link rel='alternate' hreflang='english' href='{loc}'/></url>",
    "<url><loc>{loc}</loc><xhtml:link rel='alternate' hreflang='en' href='{loc}/other'/></url>",
    "<url><loc>{loc}</loc><xhtml:link rel='amphtml' href='{loc}/amp'/></url>",
    "<url><loc>{loc}</loc><xhtml:link rel='alternate' hreflang='en'/></url>",
    "<url xmlns:xhtml='urn:not-xhtml'><loc>{loc}</loc>"
    "<xhtml:link rel='alternate' hreflang='en' href='{loc}'/></url>",
    "<url><loc>{loc}</loc><news:news><news:title>t</news:title></news:news></url>",
    "<url><loc>{loc}</loc><video:video><video:title>t</video:title></video:video></url>",
    "<url>\n  <loc>{loc}</loc>\n  <lastmod>2025-01-01</lastmod>\n</url>",
    "<url><loc>{loc}</loc><lastmod>2025-01-01</lastmod><lastmod>2025-01-02</lastmod></url>",
    "<url><loc>{loc}</loc><priority>0.5</priority><changefreq>daily</changefreq></url>",
)


def plain(n: int) -> str:
    return (
        f"<url><loc>{SITE}/p/{n}</loc><lastmod>2025-0{1 + n % 9}-01</lastmod>"
        f"<changefreq>weekly</changefreq><priority>0.{1 + n % 9}</priority></url>"
    )


def multilingual(n: int) -> str:
    group = n // len(LANGUAGES)
    language = LANGUAGES[n % len(LANGUAGES)]
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{other}" href="{SITE}/{other}/g{group}"/>'
        for other in LANGUAGES
    )
    return (
        f"<url><loc>{SITE}/{language}/g{group}</loc><lastmod>2025-01-0{1 + group % 9}</lastmod>"
        f"{links}<image:image><image:loc>{SITE}/m/{n}.jpg</image:loc></image:image></url>"
    )


def multilingual_unreciprocated(n: int) -> str:
    """Plain in shape, but every 7th page lists the next group's version."""
    entry = multilingual(n)
    if n % 7 == 0:
        group = n // len(LANGUAGES)
        entry = entry.replace(f'href="{SITE}/de/g{group}"', f'href="{SITE}/de/g{group + 1}"')
    if n % 11 == 0:
        entry = entry.replace(f"<loc>{SITE}/", f"<loc>{SITE}/self-less/", 1)
    return entry


def document(seed: int, entries: int, maker, odd_share: float) -> bytes:  # type: ignore[no-untyped-def]
    chooser = random.Random(seed)
    body = []
    for n in range(entries):
        if chooser.random() < odd_share:
            body.append(chooser.choice(ODDITIES).format(n=n, loc=f"{SITE}/odd/{n}"))
        else:
            body.append(maker(n))
        body.append(chooser.choice(("\n", "", " ")))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{protocol.SITEMAP_NS}" xmlns:image="{protocol.IMAGE_NS}" '
        f'xmlns:xhtml="{protocol.XHTML_NS}" xmlns:news="{protocol.NEWS_NS}" '
        f'xmlns:video="{protocol.VIDEO_NS}">\n' + "".join(body) + "\n</urlset>\n"
    ).encode()


def run(data: bytes, chunk: int, *, fast: bool, monkeypatch, **options):  # type: ignore[no-untyped-def]
    with monkeypatch.context() as patch:
        patch.setattr(engine, "CHUNK_SIZE", chunk)
        if not fast:
            patch.setattr(batch, "check_batch", lambda *args: False)
        report = validate(io.BytesIO(data), now=NOW, max_findings=None, **options)
    file = report.files[0]
    return file.entries, [finding.as_dict() for finding in file.findings]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("maker", [plain, multilingual, multilingual_unreciprocated])
def test_fast_path_matches_general_path(seed, maker, monkeypatch):
    odd_share = (0.0, 0.01, 0.05, 0.3)[seed % 4]
    data = document(seed, 1_200, maker, odd_share)
    chunk = (97, 1_000, 4_096, 65_536)[seed % 4]
    base_url = f"{SITE}/sitemap.xml" if seed % 3 == 0 else None
    expected = run(data, chunk, fast=False, monkeypatch=monkeypatch, base_url=base_url)
    assert run(data, chunk, fast=True, monkeypatch=monkeypatch, base_url=base_url) == expected
    if odd_share:
        assert expected[1]


DOT_SEGMENTS = ("/p/../x/{n}", "/p/a/../{n}", "/p/./{n}", "/p//{n}", "/p/%2e%2e/{n}", "/p/..")


@pytest.mark.parametrize("seed", range(4))
def test_fast_path_matches_on_dot_segments(seed, monkeypatch):
    """In a sitemap published below /p/, entries whose dot segments lead out
    of it (SM312) or stay in it, among plain ones."""
    chooser = random.Random(seed)

    def maker(n: int) -> str:
        if chooser.random() < 0.05:
            path = chooser.choice(DOT_SEGMENTS).format(n=n)
            return plain(n).replace(f"{SITE}/p/{n}<", f"{SITE}{path}<")
        return plain(n)

    data = document(seed, 1_200, maker, 0.0)
    chunk = (97, 1_000, 4_096, 65_536)[seed]
    options = {"base_url": f"{SITE}/p/sitemap.xml"}
    expected = run(data, chunk, fast=False, monkeypatch=monkeypatch, **options)
    assert run(data, chunk, fast=True, monkeypatch=monkeypatch, **options) == expected
    assert {finding["rule"] for finding in expected[1]} >= {"SM312"}


@pytest.mark.parametrize("cut", [0.3, 0.5, 0.9])
def test_fast_path_matches_on_syntax_errors(cut, monkeypatch):
    data = document(7, 1_200, multilingual, 0.02)
    broken = data[: int(len(data) * cut)] + b"<url><loc>&bad;</loc></url></urlset>"
    for chunk in (97, 4_096):
        expected = run(broken, chunk, fast=False, monkeypatch=monkeypatch)
        assert run(broken, chunk, fast=True, monkeypatch=monkeypatch) == expected
        assert any(finding["rule"] in ("SM106", "SM110") for finding in expected[1])


def test_fast_path_is_taken(monkeypatch):
    calls = []
    original = XmlChecker.check_entry
    monkeypatch.setattr(
        XmlChecker, "check_entry", lambda self, entry: calls.append(1) or original(self, entry)
    )
    data = document(1, 2_000, multilingual, 0.0)
    report = validate(data, now=NOW)
    assert report.files[0].entries == 2_000
    assert report.summary() == {"errors": 0, "warnings": 0, "info": 0}
    # Only the first entry of each origin / of each new value goes the general way.
    assert len(calls) < 20


@pytest.mark.parametrize("chunk", [61, 1_000, 65_536])
def test_same_findings_whatever_the_chunks(chunk, monkeypatch):
    """Strays in bulk (more than MAX_STRAY_CHILDREN in a row) and a url nested in
    a stray: the same findings however the bytes arrive."""
    body = "".join(plain(n) for n in range(3_000))
    nested = "<foo><url><loc>https://example.com/nested</loc></url>" + "<x/>" * 3_000 + "</foo>"
    data = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{protocol.SITEMAP_NS}">{body}{nested}<bar/>{plain(9_999)}<baz/></urlset>'
    ).encode()
    entries, findings = run(data, chunk, fast=True, monkeypatch=monkeypatch)
    assert (entries, findings) == run(data, 65_536, fast=False, monkeypatch=monkeypatch)
    assert entries == 3_001
    assert [finding["message"] for finding in findings] == [
        "<foo> directly under <urlset>",
        "<bar> directly under <urlset>",
        "<baz> directly under <urlset>",
    ]


@pytest.mark.parametrize("chunk", [97, 65_536])
def test_fast_path_matches_on_empty_hrefs(chunk, monkeypatch):
    """Batches of one shape whose links all have href="": each is SM842 on
    both paths (an empty href once passed the batch's whole-list URL test)."""
    body = "".join(
        f'<url><loc>{SITE}/p/{n}</loc><xhtml:link rel="alternate" hreflang="en" href=""/></url>'
        for n in range(1_000)
    )
    data = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{protocol.SITEMAP_NS}" xmlns:xhtml="{protocol.XHTML_NS}">{body}</urlset>'
    ).encode()
    expected = run(data, chunk, fast=False, monkeypatch=monkeypatch)
    assert run(data, chunk, fast=True, monkeypatch=monkeypatch) == expected
    assert [finding["rule"] for finding in expected[1]] == ["SM842"] * 1_000
