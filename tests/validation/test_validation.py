"""The validator's rules: every rule id fires on a bad input and stays quiet on
the corrected one; clean files give no findings; hostile input is refused."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import subprocess
import sys
from pathlib import Path

import pytest

from django_sitemaps_plus import protocol
from django_sitemaps_plus.extensions.rules import hreflang as hreflang_rules
from django_sitemaps_plus.validation import (
    RULES,
    Severity,
    UnreadableTarget,
    assert_valid_sitemap,
    validate,
)
from django_sitemaps_plus.validation.report import render_json, render_text

NOW = dt.datetime(2026, 1, 15, 12, 0, tzinfo=dt.timezone.utc)
DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'
NAMESPACES = (
    f'xmlns="{protocol.SITEMAP_NS}" xmlns:image="{protocol.IMAGE_NS}" '
    f'xmlns:news="{protocol.NEWS_NS}" xmlns:video="{protocol.VIDEO_NS}" '
    f'xmlns:xhtml="{protocol.XHTML_NS}"'
)
SITE = "https://example.com"


def urlset(body: str, *, decl: str = DECL, namespaces: str = NAMESPACES) -> bytes:
    return f"{decl}<urlset {namespaces}>\n{body}\n</urlset>\n".encode()


def url(inner: str = "", loc: str = f"{SITE}/page") -> str:
    return f"<url><loc>{loc}</loc>{inner}</url>"


def index(body: str) -> bytes:
    return f'{DECL}<sitemapindex xmlns="{protocol.SITEMAP_NS}">\n{body}\n</sitemapindex>\n'.encode()


def sitemap(loc: str = f"{SITE}/sitemap-1.xml", inner: str = "") -> str:
    return f"<sitemap><loc>{loc}</loc>{inner}</sitemap>"


_RSS_SCRIPT = """
import sys
from django_sitemaps_plus.validation import validate

def peak_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

validate(b"<urlset/>")  # imports and first-use caches are not the file's cost
with open("/proc/self/clear_refs", "w") as clear_refs:
    clear_refs.write("5")  # the peak RSS starts again from the current RSS
before = peak_kb()
if sys.argv[1] != "-":
    validate(sys.argv[1])
print((peak_kb() - before) * 1024)
"""


def peak_rss_growth(path: Path) -> int:
    """Bytes the peak RSS of a fresh interpreter grows while validating ``path``.

    The peak (VmHWM) is reset before validating: the peak a process reports
    otherwise starts at its parent's (``ru_maxrss`` survives fork and exec),
    which would hide any growth below pytest's own peak.
    """
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("needs Linux's /proc/self/clear_refs to reset the peak RSS")
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": ""},
    )
    return int(result.stdout)


def rule_ids(data: bytes, **options: object) -> set[str]:
    return validate(data, now=NOW, **options).rule_ids()  # type: ignore[arg-type]


def video(**overrides: str | None) -> str:
    fields = {
        "thumbnail_loc": f"{SITE}/thumb.jpg",
        "title": "Grilling steaks",
        "description": "How to grill steaks.",
        "content_loc": f"{SITE}/video.mp4",
    }
    fields.update(overrides)  # type: ignore[arg-type]
    extra = fields.pop("extra", None) or ""
    children = "".join(
        f"<video:{name}>{value}</video:{name}>"
        for name, value in fields.items()
        if value is not None
    )
    return f"<video:video>{children}{extra}</video:video>"


def news(**overrides: str | None) -> str:
    fields = {
        "name": "The Example Times",
        "language": "en",
        "publication_date": "2026-01-15T08:00:00Z",
        "title": "Merger talks",
    }
    fields.update(overrides)  # type: ignore[arg-type]
    publication = "".join(
        f"<news:{name}>{fields[name]}</news:{name}>"
        for name in ("name", "language")
        if fields[name] is not None
    )
    rest = "".join(
        f"<news:{name}>{fields[name]}</news:{name}>"
        for name in ("publication_date", "title")
        if fields[name] is not None
    )
    return f"<news:news><news:publication>{publication}</news:publication>{rest}</news:news>"


def alternates(loc: str, versions: dict[str, str]) -> str:
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{href}"/>'
        for lang, href in versions.items()
    )
    return url(links, loc=loc)


EN, DE = f"{SITE}/en/", f"{SITE}/de/"
CLEAN = urlset(url())
CLEAN_INDEX = index(sitemap())

# rule id → (input that breaks the rule, the same input corrected, options).
CASES: dict[str, tuple[bytes, bytes, dict[str, object]]] = {
    "SM101": (
        urlset(url(), decl='<?xml version="1.0" encoding="ISO-8859-1"?>\n'),
        CLEAN,
        {},
    ),
    "SM102": (urlset(url(), decl=""), CLEAN, {}),
    "SM103": (b"\n" + CLEAN, CLEAN, {}),
    "SM104": (urlset(url(), decl='<?xml version="1.1" encoding="UTF-8"?>\n'), CLEAN, {}),
    "SM105": (b"\xef\xbb\xbf" + CLEAN, CLEAN, {}),
    "SM106": (urlset(url(loc=f"{SITE}/?a=1&b=2")), urlset(url(loc=f"{SITE}/?a=1&amp;b=2")), {}),
    "SM110": (CLEAN.replace(b"</url>", b""), CLEAN, {}),
    "SM111": (
        DECL.encode() + b'<!DOCTYPE urlset [<!ENTITY x "y">]>\n' + CLEAN[len(DECL) :],
        CLEAN,
        {},
    ),
    "SM112": (b"\x00\x01\x02\xff binary", CLEAN, {}),
    "SM113": (gzip.compress(CLEAN)[:-12], gzip.compress(CLEAN), {}),
    "SM114": (b"PK\x03\x04" + b"\x00" * 40, CLEAN, {}),
    "SM115": (b"", CLEAN, {}),
    "SM201": (f'{DECL}<rss version="2.0"><channel/></rss>'.encode(), CLEAN, {}),
    "SM202": (
        urlset(url(), namespaces='xmlns="https://www.sitemaps.org/schemas/sitemap/0.9"'),
        CLEAN,
        {},
    ),
    "SM203": (index(sitemap() + url()), CLEAN_INDEX, {}),
    "SM204": (urlset(""), CLEAN, {}),
    "SM205": (urlset(url("<title>x</title>")), CLEAN, {}),
    "SM206": (index(f"<sitemap>{SITE}/a.xml</sitemap>"), CLEAN_INDEX, {}),
    "SM207": (urlset("<url><lastmod>2024-01-01</lastmod></url>"), CLEAN, {}),
    "SM208": (urlset(url("<priority>0.5</priority><priority>0.6</priority>")), CLEAN, {}),
    "SM209": (
        urlset(f"<url><lastmod>2024-01-01</lastmod><loc>{SITE}/</loc></url>"),
        urlset(f"<url><loc>{SITE}/</loc><lastmod>2024-01-01</lastmod></url>"),
        {},
    ),
    "SM210": (urlset(url(loc=f"\n  {SITE}/page\n")), CLEAN, {}),
    "SM301": (urlset("<url><loc></loc></url>"), CLEAN, {}),
    "SM302": (urlset(url(loc="/page.html")), CLEAN, {}),
    "SM303": (urlset(url(loc=f"{SITE}/a b")), urlset(url(loc=f"{SITE}/a%20b")), {}),
    "SM304": (urlset(url(loc=f"{SITE}/über")), urlset(url(loc=f"{SITE}/%C3%BCber")), {}),
    "SM305": (urlset(url(loc=f"{SITE}/" + "a" * 2100)), CLEAN, {}),
    "SM306": (urlset(url(loc=f"{SITE}/" + "a" * 1100)), CLEAN, {}),
    "SM307": (urlset(url(loc="http://a.b/")), CLEAN, {}),
    "SM310": (
        urlset(url(loc="https://blog.example.com/")),
        CLEAN,
        {"base_url": f"{SITE}/sitemap.xml"},
    ),
    "SM311": (urlset(url() + url(loc="http://www.example.com/")), CLEAN, {}),
    "SM312": (
        urlset(url(loc=f"{SITE}/images/a.html")),
        urlset(url(loc=f"{SITE}/catalog/a.html")),
        {"base_url": f"{SITE}/catalog/sitemap.xml"},
    ),
    "SM313": (urlset(url() + url()), CLEAN, {}),
    "SM314": (urlset(url(loc=f"{SITE}/?PHPSESSID=abc")), CLEAN, {}),
    "SM315": (
        urlset(url(loc=f"{SITE}/list?sort=price")),
        urlset(url(loc=f"{SITE}/list?page=2")),
        {},
    ),
    "SM316": (urlset(url(loc=f"{SITE}/?utm_source=x")), CLEAN, {}),
    "SM317": (urlset(url(loc=f"{SITE}/post-sitemap.xml")), CLEAN, {}),
    "SM401": (
        urlset(url("<lastmod>2024-01-01 10:00</lastmod>")),
        urlset(url("<lastmod>2024-01-01</lastmod>")),
        {},
    ),
    "SM402": (
        urlset(url("<lastmod>2024-05</lastmod>")),
        urlset(url("<lastmod>2024-05-01</lastmod>")),
        {},
    ),
    "SM403": (
        urlset(url("<lastmod>2026-03-01</lastmod>")),
        urlset(url("<lastmod>2026-01-15</lastmod>")),
        {},
    ),
    "SM404": (
        urlset("".join(url("<lastmod>2024-01-01</lastmod>", loc=f"{SITE}/{i}") for i in range(3))),
        urlset(
            "".join(
                url(f"<lastmod>2024-01-0{i + 1}</lastmod>", loc=f"{SITE}/{i}") for i in range(3)
            )
        ),
        {},
    ),
    "SM405": (
        urlset(url("<changefreq>sometimes</changefreq>")),
        urlset(url("<changefreq>daily</changefreq>")),
        {},
    ),
    "SM406": (urlset(url("<priority>5</priority>")), urlset(url("<priority>.5</priority>")), {}),
    "SM801": (urlset(url("<image:image><image:title>x</image:title></image:image>")), CLEAN, {}),
    "SM802": (
        urlset(url(f"<image:image><image:loc>{SITE}/i.jpg</image:loc></image:image>" * 1001)),
        urlset(url(f"<image:image><image:loc>{SITE}/i.jpg</image:loc></image:image>" * 1000)),
        {},
    ),
    "SM803": (
        urlset(
            url(
                f"<image:image><image:loc>{SITE}/i.jpg</image:loc><image:caption>c</image:caption></image:image>"
            )
        ),
        urlset(url(f"<image:image><image:loc>{SITE}/i.jpg</image:loc></image:image>")),
        {},
    ),
    "SM804": (urlset(url("<image:image><image:loc>/i.jpg</image:loc></image:image>")), CLEAN, {}),
    "SM811": (urlset(url(news(title=None))), urlset(url(news())), {}),
    "SM812": (urlset(url(news(language="en-US"))), urlset(url(news(language="zh-cn"))), {}),
    "SM813": (urlset(url(news(publication_date="May 5, 2024"))), urlset(url(news())), {}),
    "SM814": (urlset(url(news(publication_date="2026-01-11"))), urlset(url(news())), {}),
    "SM815": (
        urlset("".join(url(news(), loc=f"{SITE}/{i}") for i in range(1001))),
        urlset("".join(url(news(), loc=f"{SITE}/{i}") for i in range(1000))),
        {},
    ),
    "SM821": (urlset(url(video(thumbnail_loc=None))), urlset(url(video())), {}),
    "SM822": (urlset(url(video(title="t" * 101))), urlset(url(video(title="t" * 100))), {}),
    "SM823": (
        urlset(url(video(description="d" * 2049))),
        urlset(url(video(description="d" * 2048))),
        {},
    ),
    "SM824": (
        urlset(url(video(extra="<video:duration>0</video:duration>"))),
        urlset(url(video(extra="<video:duration>28800</video:duration>"))),
        {},
    ),
    "SM825": (
        urlset(url(video(extra="<video:rating>5.1</video:rating>"))),
        urlset(url(video(extra="<video:rating>5.0</video:rating>"))),
        {},
    ),
    "SM826": (
        urlset(url(video(extra="<video:tag>t</video:tag>" * 33))),
        urlset(url(video(extra="<video:tag>t</video:tag>" * 32))),
        {},
    ),
    "SM827": (
        urlset(url(video(extra="<video:category>Cooking</video:category>"))),
        urlset(url(video())),
        {},
    ),
    "SM828": (urlset(url(video(content_loc="None"))), urlset(url(video())), {}),
    "SM829": (
        urlset(url(video(extra="<video:live>YES</video:live>"))),
        urlset(url(video(extra="<video:live>no</video:live>"))),
        {},
    ),
    "SM830": (
        urlset(url(video(extra="<video:publication_date>yesterday</video:publication_date>"))),
        urlset(url(video(extra="<video:publication_date>2026-01-01</video:publication_date>"))),
        {},
    ),
    "SM841": (
        urlset(alternates(EN, {"english": EN})),
        urlset(alternates(EN, {"en-GB": EN, "x-default": EN})),
        {},
    ),
    "SM842": (
        urlset(alternates(EN, {"en": EN, "de": "/de/"})),
        urlset(alternates(EN, {"en": EN})),
        {},
    ),
    "SM843": (
        urlset(alternates(EN, {"de": DE}) + alternates(DE, {"en": EN})),
        urlset(alternates(EN, {"en": EN, "de": DE}) + alternates(DE, {"en": EN, "de": DE})),
        {},
    ),
    "SM844": (
        urlset(alternates(EN, {"en": EN, "de": DE}) + url(loc=DE)),
        urlset(alternates(EN, {"en": EN, "de": DE}) + alternates(DE, {"de": DE, "en": EN})),
        {},
    ),
    "SM901": (f"{SITE}/a\n\n{SITE}/b\n".encode(), f"{SITE}/a\n{SITE}/b\n".encode(), {}),
}
# Rules that need a server, a whole index or 50,000 entries: tested below.
ELSEWHERE = {"SM501", "SM502", "SM503", "SM601", "SM602", "SM603", "SM701", "SM702", "SM703"}


def test_every_rule_has_a_case():
    assert set(CASES) | ELSEWHERE == set(RULES)


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_fires_on_bad_input_only(rule_id):
    bad, good, options = CASES[rule_id]
    assert rule_id in rule_ids(bad, **options)
    assert rule_id not in rule_ids(good, **options)


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_findings_carry_rule_metadata(rule_id):
    bad, _, options = CASES[rule_id]
    report = validate(bad, now=NOW, **options)  # type: ignore[arg-type]
    finding = next(f for f in report.findings if f.rule.id == rule_id)
    data = finding.as_dict()
    assert data["severity"] == RULES[rule_id].severity.value
    assert data["source"] == RULES[rule_id].source.value
    assert data["hint"] == RULES[rule_id].hint
    assert data["message"]


class TestCleanFiles:
    def test_full_featured_sitemap_has_no_findings(self):
        body = (
            alternates(EN, {"en": EN, "de": DE, "x-default": EN}).replace(
                "</url>", "<lastmod>2025-12-01T10:00:00+01:00</lastmod></url>", 0
            )
            + alternates(DE, {"de": DE, "en": EN, "x-default": EN})
            + url(
                "<lastmod>2025-11-30</lastmod><changefreq>weekly</changefreq>"
                "<priority>0.8</priority>"
                f"<image:image><image:loc>{SITE}/a.jpg</image:loc></image:image>"
                + news()
                + video(
                    extra="<video:duration>600</video:duration><video:rating>4.2</video:rating>"
                )
            )
        )
        report = validate(urlset(body), now=NOW, base_url=f"{SITE}/sitemap.xml")
        assert report.findings == []
        assert report.files[0].entries == 3

    def test_clean_index_and_text_and_gzip(self):
        assert rule_ids(CLEAN_INDEX) == set()
        assert rule_ids(f"{SITE}/a\r\n{SITE}/b".encode()) == set()
        assert rule_ids(gzip.compress(CLEAN)) == set()

    def test_prefixed_namespace_is_fine(self):
        data = (
            f'{DECL}<s:urlset xmlns:s="{protocol.SITEMAP_NS}"><s:url><s:loc>{SITE}/</s:loc>'
            "</s:url></s:urlset>"
        ).encode()
        assert rule_ids(data) == set()


class TestLastmodValues:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("2023-02-30", {"SM401"}),  # the pattern allows it, the calendar does not
            ("2024-02-29T23:59:59.5+14:00", set()),
            ("2026-01-16", set()),  # tomorrow in UTC, today in UTC+14: not flagged
            ("2026-01-17", {"SM403"}),
            ("2026-01-15T12:30:00Z", {"SM403"}),
            ("2026-01-15T12:05:00Z", set()),  # within the clock-skew tolerance
            ("2024", {"SM402"}),
            ("2024-01-01T10:00+01:00", {"SM402"}),
            ("2024-01-01T10:00:00", {"SM401"}),  # a time needs a zone
            # The ends of the calendar: in the future, or simply old; never a crash.
            ("9999-12-31", {"SM403"}),
            ("9999-12", {"SM402", "SM403"}),
            ("9999", {"SM402", "SM403"}),
            ("9999-12-31T23:00:00-05:00", {"SM403"}),  # past year 9999 in UTC
            ("0001-01-01", set()),
            ("0001", {"SM402"}),
            ("0001-01-01T00:00:00+05:00", set()),  # before year 1 in UTC
            ("0000-01-01", {"SM401"}),
        ],
    )
    def test_values(self, value, expected):
        assert rule_ids(urlset(url(f"<lastmod>{value}</lastmod>"))) == expected

    @pytest.mark.parametrize(
        ("value", "old"),
        [
            ("9999-12-31", False),
            ("9999-12-31T23:00:00-05:00", False),
            ("0001-01-01", True),
            ("0001-01-01T00:00:00+05:00", True),
        ],
    )
    def test_news_and_video_dates_at_the_ends_of_the_calendar(self, value, old):
        news_rules = rule_ids(urlset(url(news(publication_date=value))))
        assert news_rules == ({"SM814"} if old else set())
        video_rules = rule_ids(urlset(url(video(publication_date=value, expiration_date=value))))
        assert video_rules == set()

    def test_each_distinct_value_is_reported_on_every_entry(self):
        body = "".join(url("<lastmod>2023-02-30</lastmod>", loc=f"{SITE}/{i}") for i in range(3))
        report = validate(urlset(body), now=NOW)
        assert [f.rule.id for f in report.findings].count("SM401") == 3


@pytest.mark.parametrize(
    ("published", "old"),
    [
        ("2026-01-13T11:59:00Z", True),
        ("2026-01-13T12:01:00Z", False),
        ("2026-01-11", True),
        ("2026-01-13", False),  # still the 13th in UTC-12 two days ago
    ],
)
def test_news_two_day_window(published, old):
    assert ("SM814" in rule_ids(urlset(url(news(publication_date=published))))) is old


FR = f"{SITE}/fr/"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # The version without alternates comes first, then one listing it.
        (url(loc=DE) + alternates(EN, {"en": EN, "de": DE}), {"SM844"}),
        # Two pages list a third with different sets of versions; the third lists both.
        (
            alternates(EN, {"en": EN, "fr": FR})
            + alternates(DE, {"de": DE, "fr": FR})
            + alternates(FR, {"fr": FR, "en": EN, "de": DE}),
            {"SM844"},
        ),
        # A complete cluster of three in any order.
        (
            alternates(FR, {"fr": FR, "en": EN, "de": DE})
            + alternates(EN, {"de": DE, "en": EN, "fr": FR})
            + alternates(DE, {"en": EN, "fr": FR, "de": DE}),
            set(),
        ),
        # Alternates in another file cannot be checked here.
        (alternates(EN, {"en": EN, "de": f"{SITE}/elsewhere/de/"}), set()),
    ],
)
def test_hreflang_reciprocity(body, expected):
    assert rule_ids(urlset(body)) == expected


def test_links_waiting_for_their_entry_are_bounded(monkeypatch):
    # EN lists three versions not seen yet; each, when it comes, lists none.
    languages = ("de", "fr", "it")
    others = [f"{SITE}/{language}/" for language in languages]
    versions = {"en": EN, **dict(zip(languages, others))}
    body = alternates(EN, versions) + "".join(url(loc=other) for other in others)
    report = validate(urlset(body), now=NOW)
    assert [f.url for f in report.findings if f.rule.id == "SM844"] == others
    monkeypatch.setattr(hreflang_rules, "MAX_PENDING_ALTERNATES", 2)
    report = validate(urlset(body), now=NOW)
    assert [f.url for f in report.findings if f.rule.id == "SM844"] == others[:2]


class TestPositions:
    def test_syntax_error_has_line_and_column_and_what_was_expected(self):
        report = validate(b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset>\n<url>\n</urlset>')
        (finding,) = [f for f in report.findings if f.rule.id == "SM110"]
        assert finding.line == 4
        assert finding.column is not None
        assert "mismatch" in finding.message

    def test_entry_findings_have_the_elements_line_and_url(self):
        report = validate(urlset(url() + "\n\n" + url("<priority>2</priority>", loc=f"{SITE}/b")))
        (finding,) = report.findings
        assert (finding.rule.id, finding.line, finding.url) == ("SM406", 5, f"{SITE}/b")

    def test_text_sitemap_lines(self):
        report = validate(f"{SITE}/a\n/relative\n".encode())
        (finding,) = report.findings
        assert (finding.rule.id, finding.line) == ("SM302", 2)
        assert report.files[0].kind == "text"


class TestLimits:
    def test_50001_urls_and_sitemaps(self):
        entries = "".join(f"<url><loc>{SITE}/{i}</loc></url>\n" for i in range(50_001))
        report = validate(urlset(entries))
        assert report.rule_ids() == {"SM501"}
        (finding,) = report.findings
        assert finding.line == 50_003
        sitemaps = "".join(f"<sitemap><loc>{SITE}/s{i}.xml</loc></sitemap>" for i in range(50_001))
        assert validate(index(sitemaps), follow=False).rule_ids() == {"SM502"}

    @pytest.mark.slow
    def test_gzip_bomb_stops_at_the_limit_with_flat_memory(self, tmp_path):
        padding = (b"<!--" + b" " * 1_000 + b"-->\n") * (protocol.MAX_FILE_BYTES // 1_000)
        bomb = gzip.compress(CLEAN.replace(b"</urlset>", padding + b"</urlset>"), 1)
        assert len(bomb) * 100 < protocol.MAX_FILE_BYTES  # inflates over a hundredfold
        report = validate(bomb)
        assert report.rule_ids() == {"SM503"}
        assert report.files[0].uncompressed_bytes == protocol.MAX_FILE_BYTES
        path = tmp_path / "bomb.xml.gz"
        path.write_bytes(bomb)
        assert peak_rss_growth(path) < 10_000_000  # (under 1 MB measured)

    def test_entry_cut_at_the_size_limit_counts_unchecked(self):
        # The cut falls inside the last entry: it counts, and is neither
        # checked (its end is unknown) nor reported as out of place.
        padding = b"<!--" + b" " * 1_000 + b"-->"
        cut_entry = f"<url><loc>{SITE}/cut</loc>".encode() + padding * (
            protocol.MAX_FILE_BYTES // len(padding) + 1
        )
        data = urlset(url(loc=f"{SITE}/a") + url(loc=f"{SITE}/b")).replace(
            b"</urlset>", cut_entry + b"</url></urlset>"
        )
        report = validate(gzip.compress(data, 1))
        assert report.rule_ids() == {"SM503"}
        assert report.files[0].entries == 3

    def test_entries_before_a_syntax_error_are_checked(self):
        data = urlset(url(loc="/relative") + "\n" + url(loc=f"{SITE}/b") + "\n<url><<")
        report = validate(data)
        assert report.rule_ids() == {"SM302", "SM106"}
        assert report.files[0].entries == 2


class TestHostileInput:
    def test_external_entity_is_never_resolved(self, tmp_path):
        secret = tmp_path / "secret.txt"
        secret.write_text("TOP-SECRET")
        data = (
            f'{DECL}<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file://{secret}">]>'
            f'<urlset xmlns="{protocol.SITEMAP_NS}"><url><loc>&xxe;</loc></url></urlset>'
        ).encode()
        report = validate(data)
        assert report.rule_ids() == {"SM111"}
        assert "TOP-SECRET" not in render_json(report)

    @pytest.mark.parametrize(
        "path",
        [
            "/site/../secret/creds.txt",
            "/site/%2e%2e/secret/creds.txt",
            "/site/%2E%2E%2Fsecret/creds.txt",
            "/site/..%2fsecret/creds.txt",
            "//secret/creds.txt",
        ],
    )
    def test_local_index_never_reads_outside_its_directory(self, tmp_path, path):
        (tmp_path / "secret").mkdir()
        (tmp_path / "secret" / "creds.txt").write_text("password=TOP-SECRET\n")
        (tmp_path / "site").mkdir()
        target = tmp_path / "site" / "sitemap.xml"
        target.write_bytes(index(sitemap(f"{SITE}{path}")))
        report = validate(target, base_url=f"{SITE}/site/sitemap.xml", now=NOW)
        assert [file.target for file in report.files] == [str(target)]
        assert [f.rule.id for f in report.findings] == ["SM312"]
        assert "TOP-SECRET" not in render_json(report)

    def test_local_index_never_reads_an_absolute_path_or_a_link_out(self, tmp_path):
        secret = tmp_path / "secret" / "creds.txt"
        secret.parent.mkdir()
        secret.write_text("password=TOP-SECRET\n")
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "link.xml").symlink_to(secret)
        target = tmp_path / "site" / "sitemap.xml"
        # "/site/" + "/tmp/.../creds.txt" once joined onto the directory as an absolute path.
        locs = [f"{SITE}/site/{secret.as_posix()}", f"{SITE}/site/link.xml", f"{SITE}/site/%00"]
        target.write_bytes(index("".join(sitemap(loc) for loc in locs)))
        report = validate(target, base_url=f"{SITE}/site/sitemap.xml", now=NOW)
        assert [file.target for file in report.files] == [str(target)]
        # The first names a path below the directory that does not exist there.
        assert [f.rule.id for f in report.findings] == ["SM603", "SM601", "SM601"]
        assert "TOP-SECRET" not in render_json(report)
        # Published at the root: "//tmp/..." is "/tmp/..." below it, not the absolute path.
        target.write_bytes(index(sitemap(f"{SITE}/{secret.as_posix()}")))
        report = validate(target, base_url=f"{SITE}/sitemap.xml", now=NOW)
        assert [f.rule.id for f in report.findings] == ["SM603"]  # no such file below the root
        assert "TOP-SECRET" not in render_json(report)

    def test_dot_segments_leaving_the_directory_are_sm312(self):
        base_url = f"{SITE}/dir/sitemap.xml"
        for loc in ("/dir/../x", "/dir/%2e%2e/x", "/dir/a/../../x", "/dir/.."):
            assert rule_ids(urlset(url(loc=f"{SITE}{loc}")), base_url=base_url) == {"SM312"}
        assert rule_ids(urlset(url(loc=f"{SITE}/dir/a/../x")), base_url=base_url) == set()
        # Among plain entries (the batch path), only the one leaving is reported.
        body = "".join(url(loc=f"{SITE}/dir/{name}") for name in ("a", "../x", "b", "c/../d"))
        report = validate(urlset(body), base_url=base_url, now=NOW)
        assert [(f.rule.id, f.url) for f in report.findings] == [("SM312", f"{SITE}/dir/../x")]

    def test_urls_without_a_path_in_a_batch_with_a_finding(self):
        # The per-entry loop of a batch, for URLs with no path at all.
        body = "".join(url(f"<priority>{p}</priority>", loc=SITE) for p in ("0.5", "0.5", "9"))
        report = validate(urlset(body), base_url=f"{SITE}/sitemap.xml", now=NOW)
        assert [f.rule.id for f in report.findings] == ["SM313", "SM406", "SM313"]

    def test_billion_laughs_is_refused(self):
        entities = '<!ENTITY a "lol">' + "".join(
            f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(9)
        )
        data = f"<!DOCTYPE urlset [{entities}]><urlset><url><loc>&j;</loc></url></urlset>"
        assert validate(data.encode()).rule_ids() == {"SM111", "SM102"}

    def test_doctype_after_long_prolog_is_still_refused(self):
        comment = "<!--" + "x" * 70_000 + "-->"
        doctype = '<!DOCTYPE urlset [<!ENTITY x "y">]>'
        body = f'<urlset xmlns="{protocol.SITEMAP_NS}"><url><loc>{SITE}/&x;</loc></url></urlset>'
        report = validate(f"{DECL}{comment}{doctype}{body}".encode())
        assert report.rule_ids() == {"SM111"}

    @pytest.mark.slow
    def test_many_stray_elements_do_not_accumulate(self, tmp_path):
        stray = b'<x:p xmlns:x="urn:x"/>' * 250_000
        data = CLEAN.replace(b"<url>", stray + b"<url>").replace(b"</urlset>", stray + b"</urlset>")
        assert validate(data).findings == []
        path = tmp_path / "stray.xml"
        path.write_bytes(data)
        # Kept as a tree, half a million elements would take about a hundred megabytes
        # (measured without MAX_STRAY_CHILDREN: 104 MB; with it: 14 MB).
        assert peak_rss_growth(path) < 20_000_000

    def test_huge_text_node_is_refused(self):
        data = CLEAN.replace(b"</urlset>", b" " * 11_000_000 + b"</urlset>")
        (finding,) = validate(io.BytesIO(data)).findings
        assert finding.rule.id == "SM110"
        assert "too long" in finding.message

    def test_deep_nesting_is_refused(self):
        data = CLEAN.replace(b"<loc>", b"<a>" * 100_000 + b"<loc>")
        (finding,) = validate(data).findings
        assert finding.rule.id == "SM110"
        assert "depth" in finding.message.lower()

    def test_concatenated_gzip_members_are_one_stream(self):
        data = urlset(url(loc=f"{SITE}/a") + url(loc=f"{SITE}/b"))
        middle = data.index(b"<url>", data.index(b"<url>") + 1)
        members = gzip.compress(data[:middle]) + gzip.compress(data[middle:])
        report = validate(members)
        assert report.findings == []
        assert report.files[0].entries == 2
        assert report.files[0].uncompressed_bytes == len(data)

    def test_gzip_of_nothing_and_gzip_in_gzip(self):
        assert validate(gzip.compress(b"")).rule_ids() == {"SM115"}
        assert validate(gzip.compress(gzip.compress(CLEAN))).rule_ids() == {"SM112"}

    def test_truncated_file(self):
        assert validate(CLEAN[:-20]).rule_ids() == {"SM110"}

    def test_html_page_is_not_a_sitemap(self):
        assert validate(b"<!DOCTYPE html><html><body>hi</body></html>").rule_ids() == {
            "SM112",
            "SM102",
        }

    def test_huge_single_line_text(self):
        data = b"https://example.com/" + b"a" * 5_000_000 + b"\nhttps://example.com/b\n"
        for source in (data, io.BytesIO(data)):  # one chunk; streamed in 64 KiB chunks
            report = validate(source)
            assert report.rule_ids() == {"SM305"}
            assert report.files[0].entries == 2
            assert [f.line for f in report.findings] == [1]

    def test_utf16_is_reported(self):
        data = CLEAN.decode().replace("UTF-8", "UTF-16").encode("utf-16")
        assert "SM101" in validate(data).rule_ids()

    def test_invalid_utf8_bytes(self):
        assert "SM101" in validate(urlset(url(loc=f"{SITE}/x")).replace(b"/x", b"/\xfc")).rule_ids()


class TestApi:
    def test_path_stream_and_missing_file(self, tmp_path):
        path = tmp_path / "sitemap.xml.gz"
        path.write_bytes(gzip.compress(CLEAN))
        assert validate(path).files[0].entries == 1
        assert validate(str(path)).files[0].target == str(path)
        assert validate(io.BytesIO(CLEAN)).files[0].kind == "urlset"
        with pytest.raises(UnreadableTarget):
            validate(tmp_path / "missing.xml")

    def test_ignore_and_max_findings(self):
        data = urlset("".join(url("<priority>9</priority>", loc=f"{SITE}/{i}") for i in range(10)))
        report = validate(data, max_findings=3)
        assert len(report.findings) == 3
        assert report.files[0].omitted == 7
        assert report.summary() == {"errors": 10, "warnings": 0, "info": 0}
        assert validate(data, ignore=["SM406"]).findings == []
        with pytest.raises(ValueError, match="SM999"):
            validate(data, ignore=["SM999"])

    def test_findings_beyond_max_findings_are_counted_in_the_assertion(self):
        data = urlset("".join(url("<priority>9</priority>", loc=f"{SITE}/{i}") for i in range(10)))
        with pytest.raises(AssertionError) as info:
            assert_valid_sitemap(data, max_findings=3)
        message = str(info.value)
        assert message.count("SM406") == 3
        assert message.endswith("\n  ... and 7 more not kept (max_findings)")

    def test_assert_valid_sitemap(self):
        assert_valid_sitemap(CLEAN)
        with pytest.raises(AssertionError, match="SM406"):
            assert_valid_sitemap(urlset(url("<priority>9</priority>")))
        warning_only = urlset(url() + url())
        assert_valid_sitemap(warning_only)
        with pytest.raises(AssertionError, match="SM313"):
            assert_valid_sitemap(warning_only, fail_level="warning")

    def test_fail_levels(self):
        report = validate(urlset(url(loc="http://a.b/")))  # info only
        assert not report.fails("error")
        assert not report.fails(Severity.WARNING)
        assert report.fails("info")

    def test_text_report_groups_by_severity_and_ends_with_summary(self):
        report = validate(
            urlset(url("<priority>9</priority>") + url()), base_url=f"{SITE}/sitemap.xml"
        )
        text = render_text(report)
        assert text.index("Errors:") < text.index("Warnings:")
        assert text.endswith("1 error, 1 warning, 0 info\n")
