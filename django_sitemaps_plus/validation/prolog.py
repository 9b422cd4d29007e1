"""Prolog and encoding: what precedes the root element (XML declaration,
byte order mark, DOCTYPE, the root's name), how a file is recognised (XML,
text or binary), and which rule a parser's syntax error falls under."""

from __future__ import annotations

import codecs
import re
from typing import Final

from django_sitemaps_plus.extensions.rules.values import Findings

#: Bytes inspected before the root element for the XML declaration, a BOM
#: and a DOCTYPE.
PROLOG_SNIFF_BYTES: Final = 1 << 16

_XML_DECL_RE: Final = re.compile(r"<\?xml(?P<attrs>\s[^?]*)\?>")
_DECL_ATTR_RE: Final = re.compile(r"""(version|encoding)\s*=\s*["']([^"']*)["']""")
#: The position lxml appends to a syntax error's message (given apart).
POSITION_SUFFIX_RE: Final = re.compile(r",? line \d+, column \d+$")
_FIRST_MARKUP_RE: Final = re.compile(
    r"<!DOCTYPE\s+(?P<doctype>[^\s\[>]+)|<(?P<element>[^\s/>!?]+)", re.IGNORECASE
)


def is_utf16(head: bytes) -> bool:
    """A UTF-16 byte order mark, or "<" as UTF-16."""
    return head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, b"<\x00", b"\x00<")


def looks_like_xml(head: bytes) -> bool:
    start = head.lstrip(b" \t\r\n")
    return start.startswith((b"<", codecs.BOM_UTF8 + b"<")) or is_utf16(head)


def decodes_as_utf8(head: bytes) -> bool:
    try:
        # The last three bytes may cut a multi-byte character in two.
        head[:-3].decode("utf-8") if len(head) >= PROLOG_SNIFF_BYTES else head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_prolog(report: Findings, head: bytes, utf16: bool) -> bool:
    """Declaration, encoding, BOM and DOCTYPE; False when the file is refused."""
    add = report.add
    if utf16:
        add("SM101", "UTF-16 encoded; sitemaps must be UTF-8", line=1)
        text = head.decode("utf-16", errors="replace")
    else:
        if head.startswith(codecs.BOM_UTF8):
            add("SM105", "the file starts with a UTF-8 byte order mark", line=1)
            head = head[len(codecs.BOM_UTF8) :]
        text = head.decode("latin-1")  # structure only: every byte maps to one char
    text = text.lstrip("\ufeff")
    declaration = _XML_DECL_RE.match(text)
    if declaration is None:
        if _XML_DECL_RE.match(text.lstrip()) is None:  # misplaced: the parser reports it
            add("SM102", "no XML declaration", line=1)
    else:
        attrs = dict(_DECL_ATTR_RE.findall(declaration["attrs"]))
        version = attrs.get("version")
        if version != "1.0":
            add("SM104", f"version {version!r} declared", line=1)
        encoding = attrs.get("encoding")
        normalized = (encoding or "utf-8").lower().replace("_", "-")
        if normalized not in ("utf-8", "utf8") and not utf16:
            add("SM101", f"encoding {encoding!r} declared; sitemaps must be UTF-8", line=1)
    first = first_markup(text)
    if first is None:
        return True
    line = text.count("\n", 0, first.start()) + 1
    if first["doctype"]:
        if first["doctype"].lower() == "html":
            add("SM112", "an HTML page, not a sitemap", line=line)
        else:
            add(
                "SM111",
                "DOCTYPE present; the file is not processed further (no DTD is "
                "loaded, no entity resolved)",
                line=line,
            )
        return False
    local = first["element"].rpartition(":")[2]
    if local not in ("urlset", "sitemapindex"):
        # Not a sitemap: its structure is not checked further (and not kept in memory).
        add("SM201", f"root element <{local}>", line=line)
        return False
    return True


def first_markup(text: str) -> re.Match[str] | None:
    """The DOCTYPE or root start tag after the declaration, comments and PIs."""
    position = 0
    length = len(text)
    while position < length:
        while position < length and text[position] in " \t\r\n":
            position += 1
        if text.startswith("<?", position):
            end = text.find("?>", position)
        elif text.startswith("<!--", position):
            end = text.find("-->", position)
        else:
            return _FIRST_MARKUP_RE.match(text, position)
        if end < 0:
            return None
        position = end + 2
    return None


def syntax_rule(message: str) -> str:
    """The rule of a parser's syntax error, by its message."""
    if "XML declaration allowed only at the start" in message:
        return "SM103"
    if "EntityRef" in message or "StartTag: invalid element name" in message:
        return "SM106"
    if any(
        marker in message
        for marker in ("proper UTF-8", "Invalid bytes in character encoding", "encoding")
    ):
        return "SM101"
    return "SM110"
