"""Validate sitemap documents with extension elements against real schemas.

Ours: tests/schemas/sitemap.xsd (lax on extension elements) with the
extension schemas the package ships (django_sitemaps_plus/extensions/schemas),
imported side by side so every extension element is checked. Official: the
XSDs of sitemaps.org and Google beside the repository (skipped when absent),
where sitemap.xsd is strict about extension elements.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path

from lxml import etree

from django_sitemaps_plus import protocol
from tests.utils import OFFICIAL_XSD

ROOT = Path(__file__).resolve().parents[2]
OUR_SITEMAP = ROOT / "tests" / "schemas" / "sitemap.xsd"
EXTENSION_SCHEMAS = ROOT / "django_sitemaps_plus" / "extensions" / "schemas"

NS = {
    "sm": protocol.SITEMAP_NS,
    "xhtml": protocol.XHTML_NS,
    "image": protocol.IMAGE_NS,
    "news": protocol.NEWS_NS,
    "video": protocol.VIDEO_NS,
}


def _combined(imports: dict[str, Path]) -> etree.XMLSchema:
    lines = ['<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">']
    for namespace, path in imports.items():
        lines.append(f'<xs:import namespace="{namespace}" schemaLocation="{path.as_uri()}"/>')
    lines.append("</xs:schema>")
    return etree.XMLSchema(etree.fromstring("\n".join(lines).encode()))


@cache
def our_schema() -> etree.XMLSchema:
    return _combined(
        {
            protocol.SITEMAP_NS: OUR_SITEMAP,
            protocol.IMAGE_NS: EXTENSION_SCHEMAS / "image.xsd",
            protocol.NEWS_NS: EXTENSION_SCHEMAS / "news.xsd",
            protocol.VIDEO_NS: EXTENSION_SCHEMAS / "video.xsd",
            protocol.XHTML_NS: EXTENSION_SCHEMAS / "xhtml-link.xsd",
        }
    )


@cache
def official_schema() -> etree.XMLSchema | None:
    if not (OFFICIAL_XSD / "sitemap.xsd").exists():
        return None
    return _combined(
        {
            protocol.SITEMAP_NS: OFFICIAL_XSD / "sitemap.xsd",
            protocol.IMAGE_NS: OFFICIAL_XSD / "sitemap-image.xsd",
            protocol.NEWS_NS: OFFICIAL_XSD / "sitemap-news.xsd",
            protocol.VIDEO_NS: OFFICIAL_XSD / "sitemap-video.xsd",
            protocol.XHTML_NS: OFFICIAL_XSD / "xhtml1-strict.xsd",
        }
    )


def assert_valid(body: bytes, *, official: bool = True) -> etree._Element:
    """Parse ``body``, validate it against our schemas and the official ones
    (without ../shared: a skip, or in CI a failure), and return the root."""
    from tests.utils import require_reference

    root = etree.fromstring(body)
    ours = our_schema()
    assert ours.validate(root), ours.error_log
    if official:
        require_reference(OFFICIAL_XSD / "sitemap.xsd")
        schema = official_schema()
        assert schema is not None
        assert schema.validate(root), schema.error_log
    return root


def entries(root: etree._Element) -> list[tuple[str, dict[str, str]]]:
    """Each ``<url>``'s loc and its hreflang → href links."""
    out = []
    for url in root.findall("sm:url", NS):
        links = {link.get("hreflang"): link.get("href") for link in url.findall("xhtml:link", NS)}
        out.append((url.findtext("sm:loc", namespaces=NS), links))
    return out


def urlset(*urls: str, prefixes: Iterable[str] = ()) -> str:
    """An expected document: the writer puts one entry per line."""
    declarations = "".join(f' xmlns:{p}="{NS[p]}"' for p in sorted(prefixes))
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{protocol.SITEMAP_NS}"{declarations}>\n'
    )
    return head + "".join(f"{url}\n" for url in urls) + "</urlset>\n"
