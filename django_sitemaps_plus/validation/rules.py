"""Every rule the validator checks, in one registry: id, severity, source, hint.

Ids are stable: ``SM1xx`` the file (bytes, encoding, XML), ``SM2xx`` structure,
``SM3xx`` addresses, ``SM4xx`` lastmod/changefreq/priority, ``SM5xx`` limits,
``SM6xx`` indexes, ``SM7xx`` HTTP, ``SM8xx`` extensions (images 80x, news 81x,
video 82x-83x, hreflang 84x), ``SM9xx`` text sitemaps. docs/validation.md lists
the same table; a test keeps the two in step.

Severity follows the rule book (SITEMAP_RULES.md): a violation of the protocol
is an error, a rule of one search engine only is a warning, advice is info.
Extensions are Google's formats: breaking an extension's own definition
(a required element, a value range, a count limit) is an error for that
extension; Google's processing policies (deprecated tags, the news window,
hreflang reciprocity) are warnings. Where the official XSD is stricter than
the protocol text, the finding is info and says so.
"""

from __future__ import annotations

import enum
import html
from dataclasses import dataclass
from typing import Final


class Severity(str, enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK: Final = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class Source(str, enum.Enum):
    PROTOCOL = "protocol"
    GOOGLE = "Google"
    YANDEX = "Yandex"
    BING = "Bing"


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    source: Source
    title: str
    hint: str
    #: A minimal input that triggers the rule, shown in the docs.
    example: str
    #: What the finding is about: an element (``loc``, ``image:loc``), an
    #: attribute (``xhtml:link@hreflang``), or a part of the file or of the
    #: HTTP exchange (``XML declaration``, ``Content-Type``).
    element: str


ERR, WARN, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
P, G, Y = Source.PROTOCOL, Source.GOOGLE, Source.YANDEX

_RULES: Final = (
    # SM1xx: the file ------------------------------------------------------------
    Rule(
        "SM101",
        ERR,
        P,
        "Not UTF-8",
        'Serve and declare UTF-8: <?xml version="1.0" encoding="UTF-8"?>.',
        '<?xml version="1.0" encoding="windows-1251"?>',
        "encoding",
    ),
    Rule(
        "SM102",
        WARN,
        P,
        "No XML declaration",
        'Start the file with <?xml version="1.0" encoding="UTF-8"?> on the first line: the '
        "rule set of the sitemaps.org and Yandex sources requires the declaration; XML 1.0 "
        "itself makes it optional.",
        "<urlset xmlns=...> as the first line",
        "XML declaration",
    ),
    Rule(
        "SM103",
        ERR,
        P,
        "XML declaration not at the very start",
        "Remove everything (blank lines, spaces) before <?xml ...?>.",
        '\\n<?xml version="1.0" encoding="UTF-8"?>',
        "XML declaration",
    ),
    Rule(
        "SM104",
        ERR,
        P,
        "XML version other than 1.0",
        'Declare version="1.0"; sitemaps are XML 1.0.',
        '<?xml version="1.1" encoding="UTF-8"?>',
        "XML declaration",
    ),
    Rule(
        "SM105",
        INFO,
        P,
        "UTF-8 byte order mark",
        "Save the file as UTF-8 without BOM; some crawlers trip on it.",
        "EF BB BF <?xml ...?>",
        "byte order mark",
    ),
    Rule(
        "SM106",
        ERR,
        P,
        "Unescaped & or < in a value",
        "Escape & as &amp; and < as &lt; (also ' \" > as &apos; &quot; &gt;).",
        "<loc>https://example.com/?a=1&b=2</loc>",
        "character data",
    ),
    Rule(
        "SM110",
        ERR,
        P,
        "Not well-formed XML",
        "Fix the syntax error at the reported line and column; crawlers stop there.",
        "<urlset><url></urlset>",
        "document",
    ),
    Rule(
        "SM111",
        ERR,
        P,
        "DOCTYPE or DTD present (refused)",
        "Remove the <!DOCTYPE ...>; sitemaps have no DTD, and DTDs are never resolved.",
        '<!DOCTYPE urlset [<!ENTITY x "...">]>',
        "DOCTYPE",
    ),
    Rule(
        "SM112",
        ERR,
        P,
        "Not a sitemap at all",
        "Serve an XML sitemap, a gzip of one, or a UTF-8 text file of URLs.",
        "binary data, HTML",
        "document",
    ),
    Rule(
        "SM113",
        ERR,
        P,
        "Corrupt or truncated gzip",
        "Recompress the file with gzip; the stream does not decompress.",
        "1F 8B 08 ... (cut short)",
        "gzip stream",
    ),
    Rule(
        "SM114",
        ERR,
        P,
        "zip archive (only gzip is allowed)",
        "Compress with gzip (.xml.gz), not zip.",
        "PK 03 04 ...",
        "archive",
    ),
    Rule(
        "SM115",
        ERR,
        P,
        "Empty file",
        "Write at least one entry; an empty response is not a sitemap.",
        "(0 bytes)",
        "document",
    ),
    # SM2xx: structure -----------------------------------------------------------
    Rule(
        "SM201",
        ERR,
        P,
        "Root is not urlset or sitemapindex",
        "Use <urlset> for a sitemap or <sitemapindex> for an index.",
        "<rss>...</rss>",
        "root element",
    ),
    Rule(
        "SM202",
        ERR,
        P,
        "Missing or wrong sitemap namespace",
        'Declare xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" (http, no trailing slash).',
        '<urlset xmlns="https://www.sitemaps.org/schemas/sitemap/0.9">',
        "xmlns",
    ),
    Rule(
        "SM203",
        ERR,
        P,
        "Wrong entry element for the root",
        "Put <url> only in <urlset> and <sitemap> only in <sitemapindex>, directly under the root.",
        "<sitemapindex><url>...</url></sitemapindex>",
        "url / sitemap",
    ),
    Rule(
        "SM204",
        ERR,
        P,
        "No entries",
        "List at least one <url> (or <sitemap>, or one line of a text sitemap).",
        "<urlset xmlns=...></urlset>",
        "urlset / sitemapindex",
    ),
    Rule(
        "SM205",
        ERR,
        P,
        "Unexpected element in an entry",
        "A <url> holds loc, lastmod, changefreq, priority and extension elements; "
        "a <sitemap> holds loc and lastmod.",
        "<url><loc>...</loc><title>x</title></url>",
        "url / sitemap",
    ),
    Rule(
        "SM206",
        ERR,
        P,
        "Text directly inside an entry",
        "Wrap the address in <loc>...</loc>.",
        "<sitemap>https://example.com/a.xml</sitemap>",
        "url / sitemap",
    ),
    Rule(
        "SM207",
        ERR,
        P,
        "Entry without loc",
        "Give every <url> and <sitemap> exactly one <loc>.",
        "<url><lastmod>2024-01-01</lastmod></url>",
        "loc",
    ),
    Rule(
        "SM208",
        ERR,
        P,
        "Child element repeated",
        "Keep each of loc, lastmod, changefreq, priority at most once per entry.",
        "<url><loc>a</loc><loc>b</loc></url>",
        "url / sitemap",
    ),
    Rule(
        "SM209",
        INFO,
        P,
        "Child order differs from the official XSD",
        "The XSD wants loc, lastmod, changefreq, priority, then extensions; the protocol "
        "text does not require an order, but XSD-based validators reject the file.",
        "<url><lastmod>...</lastmod><loc>...</loc></url>",
        "url / sitemap",
    ),
    Rule(
        "SM210",
        WARN,
        P,
        "Whitespace around a value",
        "Write values without surrounding spaces or line breaks: <loc>https://...</loc>.",
        "<loc>\\n  https://example.com/\\n</loc>",
        "loc / lastmod / changefreq / priority",
    ),
    # SM3xx: addresses -----------------------------------------------------------
    Rule(
        "SM301", ERR, P, "Empty loc", "Put the page's absolute URL in <loc>.", "<loc></loc>", "loc"
    ),
    Rule(
        "SM302",
        ERR,
        P,
        "loc is not an absolute http(s) URL",
        "Write the full URL with scheme and host: https://example.com/page.",
        "<loc>/page.html</loc>",
        "loc",
    ),
    Rule(
        "SM303",
        ERR,
        P,
        "loc is not a valid URI (RFC 3986/3987)",
        "Percent-encode spaces, quotes, < > { } | \\ ^ ` and stray %.",
        "<loc>https://example.com/a b</loc>",
        "loc",
    ),
    Rule(
        "SM304",
        INFO,
        P,
        "Non-ASCII characters not percent-encoded",
        "RFC 3987 allows IRIs, but encode non-ASCII as UTF-8 percent escapes "
        "(ü → %C3%BC) and the host as punycode for every crawler.",
        "<loc>https://example.com/über</loc>",
        "loc",
    ),
    Rule(
        "SM305",
        ERR,
        P,
        "loc longer than 2,048 characters",
        "Shorten the URL; the protocol allows at most 2,048 characters.",
        "<loc>https://example.com/aaaa... (2,049 characters)</loc>",
        "loc",
    ),
    Rule(
        "SM306",
        WARN,
        Y,
        "loc longer than 1,024 characters",
        "Yandex reports URLs over 1,024 characters as errors; shorten the URL.",
        "<loc>https://example.com/aaaa... (1,025 characters)</loc>",
        "loc",
    ),
    Rule(
        "SM307",
        INFO,
        P,
        "loc shorter than 12 characters (XSD)",
        "The official XSD requires at least 12 characters; the protocol text does not.",
        "<loc>http://a.b/</loc>",
        "loc",
    ),
    Rule(
        "SM310",
        ERR,
        P,
        "loc on another scheme or host than the sitemap",
        "List only URLs of the sitemap's own scheme and host (subdomains need their own "
        "sitemap, unless cross-submitted through that host's robots.txt).",
        "https://example.com/sitemap.xml listing https://blog.example.com/",
        "loc",
    ),
    Rule(
        "SM311",
        ERR,
        P,
        "Several schemes or hosts in one file",
        "Keep one scheme and host per sitemap: the canonical one.",
        "<loc>https://example.com/</loc> and <loc>http://www.example.com/</loc>",
        "loc",
    ),
    Rule(
        "SM312",
        ERR,
        P,
        "loc outside the sitemap's directory",
        "Move the sitemap up (e.g. to the site root) or list only URLs at or below its directory.",
        "/catalog/sitemap.xml listing /images/a.html",
        "loc",
    ),
    Rule(
        "SM313",
        WARN,
        G,
        "Duplicate URL",
        "List each URL once per file.",
        "<loc>https://example.com/</loc> twice",
        "loc",
    ),
    Rule(
        "SM314",
        WARN,
        G,
        "Session id in the URL",
        "List canonical URLs without session ids (sessionid, PHPSESSID, jsessionid, sid).",
        "<loc>https://example.com/?PHPSESSID=abc</loc>",
        "loc",
    ),
    Rule(
        "SM315",
        WARN,
        G,
        "Sort or filter parameter in the URL",
        "List the canonical URL; sort and filter variants are usually not canonical.",
        "<loc>https://example.com/list?sort=price</loc>",
        "loc",
    ),
    Rule(
        "SM316",
        WARN,
        G,
        "Tracking parameter in the URL",
        "Drop utm_*, gclid, fbclid, yclid and the like from sitemap URLs.",
        "<loc>https://example.com/?utm_source=x</loc>",
        "loc",
    ),
    Rule(
        "SM317",
        INFO,
        P,
        "urlset lists sitemap files",
        "List sitemap files in a <sitemapindex>, not as pages of a <urlset>.",
        "<urlset><url><loc>https://example.com/post-sitemap.xml</loc></url></urlset>",
        "loc",
    ),
    # SM4xx: lastmod, changefreq, priority --------------------------------------
    Rule(
        "SM401",
        ERR,
        P,
        "lastmod is not W3C Datetime",
        "Use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+00:00 (a time needs a zone).",
        "<lastmod>2024-13-01</lastmod>, <lastmod>2024-01-01 10:00</lastmod>",
        "lastmod",
    ),
    Rule(
        "SM402",
        INFO,
        P,
        "lastmod form the official XSD rejects",
        "YYYY, YYYY-MM and hh:mm without seconds are W3C Datetime, but the XSD "
        "(xsd:date | xsd:dateTime) rejects them; prefer YYYY-MM-DD or a full time.",
        "<lastmod>2024-05</lastmod>",
        "lastmod",
    ),
    Rule(
        "SM403",
        WARN,
        G,
        "lastmod in the future",
        "Set lastmod to when the content really changed, never ahead of now.",
        "<lastmod>2999-01-01</lastmod>",
        "lastmod",
    ),
    Rule(
        "SM404",
        WARN,
        G,
        "Every entry has the same lastmod",
        "lastmod must be each page's last significant content change, not the time "
        "the sitemap was generated; omit it where unknown.",
        "84 URLs all with <lastmod>2016-11-21</lastmod>",
        "lastmod",
    ),
    Rule(
        "SM405",
        ERR,
        P,
        "Invalid changefreq",
        "Use one of always, hourly, daily, weekly, monthly, yearly, never "
        "(Google and Bing ignore changefreq).",
        "<changefreq>sometimes</changefreq>",
        "changefreq",
    ),
    Rule(
        "SM406",
        ERR,
        P,
        "priority not a number from 0.0 to 1.0",
        "Use a decimal between 0.0 and 1.0 (Yandex uses it for crawl order; Google and "
        "Bing ignore it).",
        "<priority>5</priority>",
        "priority",
    ),
    # SM5xx: limits -------------------------------------------------------------
    Rule(
        "SM501",
        ERR,
        P,
        "More than 50,000 URLs in one file",
        "Split the URLs over several sitemaps listed in a sitemap index.",
        "50,001 <url> entries",
        "url",
    ),
    Rule(
        "SM502",
        ERR,
        P,
        "More than 50,000 sitemaps in one index",
        "Split the index; an index lists at most 50,000 sitemaps.",
        "50,001 <sitemap> entries",
        "sitemap",
    ),
    Rule(
        "SM503",
        ERR,
        P,
        "Larger than 52,428,800 bytes uncompressed",
        "Split the file; the limit applies to the uncompressed size, also for gzip. "
        "Validation stops at the limit.",
        "a 60 MB sitemap, or a gzip that inflates past 50 MB",
        "document",
    ),
    # SM6xx: indexes ------------------------------------------------------------
    Rule(
        "SM601",
        ERR,
        P,
        "Listed sitemap is not readable",
        "Make every sitemap the index lists reachable (HTTP 200) and valid.",
        "<sitemap><loc>https://example.com/missing.xml</loc></sitemap> → 404",
        "sitemap/loc",
    ),
    Rule(
        "SM602",
        WARN,
        G,
        "Index lists another index",
        "List sitemaps, not indexes: Google does not follow nested indexes.",
        "sitemapindex → sitemapindex",
        "sitemap/loc",
    ),
    Rule(
        "SM603",
        INFO,
        P,
        "Child sitemap not checked: not beside the index",
        "Pass the child files too (validate_sitemaps index.xml sitemap-*.xml), or validate "
        "the index by its URL so its children are fetched.",
        "--base-url https://example.com/sitemap.xml index.xml, children not on disk",
        "sitemap/loc",
    ),
    # SM7xx: HTTP ---------------------------------------------------------------
    Rule(
        "SM701",
        WARN,
        G,
        "Sitemap URL redirects",
        "Submit and list the final URL; not every crawler follows redirects.",
        "301 Moved Permanently → https://example.com/sitemap.xml",
        "HTTP redirect",
    ),
    Rule(
        "SM702",
        INFO,
        P,
        "Unexpected Content-Type",
        "Serve XML as application/xml (or text/xml), text sitemaps as text/plain, "
        "gzip as application/gzip.",
        "Content-Type: text/html",
        "Content-Type",
    ),
    Rule(
        "SM703",
        ERR,
        P,
        "Sitemap URL redirects to another origin (not followed)",
        "Serve the sitemap at the URL you submit and list, on the site's own scheme, host and "
        "port; the validator never follows a redirect to another one (validate that URL "
        "directly if it is yours).",
        "https://example.com/sitemap.xml → 301 → https://cdn.example.net/sitemap.xml",
        "HTTP redirect",
    ),
    # SM80x: images ---------------------------------------------------------------
    Rule(
        "SM801",
        ERR,
        G,
        "image:image without image:loc",
        "Give every <image:image> one <image:loc> with the image's URL.",
        "<image:image><image:title>x</image:title></image:image>",
        "image:image",
    ),
    Rule(
        "SM802",
        ERR,
        G,
        "More than 1,000 images for one URL",
        "List at most 1,000 <image:image> per <url>.",
        "1,001 <image:image> in one <url>",
        "image:image",
    ),
    Rule(
        "SM803",
        WARN,
        G,
        "Deprecated image tag",
        "Remove image:caption, image:title, image:geo_location and image:license; "
        "Google ignores them since 2022-08-06.",
        "<image:caption>...</image:caption>",
        "image:image",
    ),
    Rule(
        "SM804",
        ERR,
        G,
        "image:loc is not an absolute http(s) URL",
        "Write the image's full URL.",
        "<image:loc>/img/a.jpg</image:loc>",
        "image:loc",
    ),
    # SM81x: news -----------------------------------------------------------------
    Rule(
        "SM811",
        ERR,
        G,
        "news:news lacks a required element",
        "Give news:publication (news:name, news:language), news:publication_date and "
        "news:title, none empty.",
        "<news:news> without <news:title>",
        "news:news",
    ),
    Rule(
        "SM812",
        ERR,
        G,
        "news:language is not an ISO 639 code",
        "Use a two- or three-letter ISO 639 code (en, de), or zh-cn / zh-tw.",
        "<news:language>en-US</news:language>",
        "news:language",
    ),
    Rule(
        "SM813",
        ERR,
        G,
        "news:publication_date is not W3C Datetime",
        "Use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+00:00.",
        "<news:publication_date>May 5, 2024</news:publication_date>",
        "news:publication_date",
    ),
    Rule(
        "SM814",
        WARN,
        G,
        "News article older than two days",
        "Keep only articles published in the last two days in a news sitemap.",
        "<news:publication_date>2008-12-23</news:publication_date>",
        "news:publication_date",
    ),
    Rule(
        "SM815",
        ERR,
        G,
        "More than 1,000 news:news in one file",
        "Split the news sitemap; at most 1,000 news entries per file.",
        "1,001 <news:news>",
        "news:news",
    ),
    # SM82x-83x: video ------------------------------------------------------------
    Rule(
        "SM821",
        ERR,
        G,
        "video:video lacks a required element",
        "Give video:thumbnail_loc, video:title, video:description and "
        "video:content_loc or video:player_loc, none empty.",
        "<video:video> without <video:thumbnail_loc>",
        "video:video",
    ),
    Rule(
        "SM822",
        ERR,
        G,
        "video:title longer than 100 characters",
        "Shorten the title to at most 100 characters.",
        "<video:title>(101 characters)</video:title>",
        "video:title",
    ),
    Rule(
        "SM823",
        ERR,
        G,
        "video:description longer than 2,048 characters",
        "Shorten the description to at most 2,048 characters.",
        "<video:description>(2,049 characters)</video:description>",
        "video:description",
    ),
    Rule(
        "SM824",
        ERR,
        G,
        "video:duration outside 1-28,800 seconds",
        "Give the duration in whole seconds, from 1 to 28,800.",
        "<video:duration>0</video:duration>",
        "video:duration",
    ),
    Rule(
        "SM825",
        ERR,
        G,
        "video:rating outside 0.0-5.0",
        "Give a rating from 0.0 to 5.0.",
        "<video:rating>7</video:rating>",
        "video:rating",
    ),
    Rule(
        "SM826",
        ERR,
        G,
        "More than 32 video:tag",
        "Keep at most 32 tags per video.",
        "33 <video:tag>",
        "video:tag",
    ),
    Rule(
        "SM827",
        WARN,
        G,
        "Deprecated video tag",
        "Remove video:category, video:gallery_loc, video:price and video:tvshow; "
        "Google deprecated them in 2022.",
        "<video:category>Cooking</video:category>",
        "video:video",
    ),
    Rule(
        "SM828",
        ERR,
        G,
        "Video URL is not an absolute http(s) URL",
        "Write full URLs in video:thumbnail_loc, video:content_loc and video:player_loc.",
        "<video:content_loc>None</video:content_loc>",
        "video:content_loc / video:player_loc",
    ),
    Rule(
        "SM829",
        ERR,
        G,
        "Video yes/no value is not yes or no",
        "Write exactly yes or no (lowercase) in family_friendly, requires_subscription and live.",
        "<video:live>YES</video:live>",
        "video:video",
    ),
    Rule(
        "SM830",
        ERR,
        G,
        "Video date is not W3C Datetime",
        "Use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+00:00 in publication_date and expiration_date.",
        "<video:publication_date>yesterday</video:publication_date>",
        "video:video",
    ),
    # SM84x: hreflang --------------------------------------------------------------
    Rule(
        "SM841",
        ERR,
        G,
        "Invalid or missing hreflang",
        "Use an ISO 639-1 language, optionally with script and region (en, en-GB, "
        "zh-Hant), or x-default.",
        '<xhtml:link rel="alternate" hreflang="english" href="..."/>',
        "xhtml:link@hreflang",
    ),
    Rule(
        "SM842",
        ERR,
        G,
        "hreflang href is not an absolute http(s) URL",
        "Write the alternate's full URL in href.",
        '<xhtml:link rel="alternate" hreflang="de" href="/de/"/>',
        "xhtml:link@href",
    ),
    Rule(
        "SM843",
        WARN,
        G,
        "Alternates do not include the page itself",
        "List every language version in each <url>, the page's own included.",
        "<url><loc>A</loc> with an alternate for B only</url>",
        "xhtml:link",
    ),
    Rule(
        "SM844",
        WARN,
        G,
        "Alternates not reciprocal",
        "If A lists B as an alternate, B must list A (and the same set of versions).",
        "A lists B, B lists no alternates",
        "xhtml:link",
    ),
    # SM9xx: text sitemaps -----------------------------------------------------------
    Rule(
        "SM901",
        INFO,
        P,
        "Blank line in a text sitemap",
        "Write one URL per line and nothing else.",
        "https://example.com/\\n\\nhttps://example.com/a",
        "line",
    ),
)


#: id → rule, the single registry the checker, the reports and the docs use.
RULES: Final[dict[str, Rule]] = {rule.id: rule for rule in _RULES}


def _cell(text: str, *, code: bool = False) -> str:
    text = text.replace("|", "\\|")
    if not code:
        return html.escape(text, quote=False)
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def rules_table() -> str:
    """The Markdown table of every rule, as docs/validation.md embeds it.

    A test compares the two, so adding or changing a rule means regenerating
    the table: ``python -c "from django_sitemaps_plus.validation.rules import
    rules_table; print(rules_table())"``.
    """
    lines = [
        "| id | severity | source | rule | example | fix |",
        "|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| {rule.id} | {rule.severity.value} | {rule.source.value} | {_cell(rule.title)} "
        f"| {_cell(rule.example, code=True)} | {_cell(rule.hint)} |"
        for rule in _RULES
    )
    return "\n".join(lines) + "\n"
