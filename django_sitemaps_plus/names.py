"""Section names and the names of their files: one rule each.

A section's name appears in its files' names and URLs
(``sitemap-<name>-<page>.xml``), so it is a lowercase slug: the registry
refuses any other (check ``E005``), the URL converter matches only these,
and a name derived from a class or model is slugified to one.
"""

from __future__ import annotations

import re
from typing import Final

from django.utils.text import slugify

#: A section name: a lowercase slug.
SECTION_NAME_PATTERN: Final = "[a-z0-9][a-z0-9_-]*"
SECTION_NAME_RE: Final = re.compile(SECTION_NAME_PATTERN)
#: A page number in a URL: 1 to 999,999,999, ASCII digits, no sign, no
#: leading zero (the URL converter's pattern; no section has a billion files).
PAGE_PATTERN: Final = "[1-9][0-9]{0,8}"
PAGE_RE: Final = re.compile(PAGE_PATTERN)
#: The largest page number a file URL can name.
MAX_PAGE: Final = 999_999_999
#: The name of a section's file, with its section, page number and format.
FILE_NAME_RE: Final = re.compile(
    rf"sitemap-(?P<section>{SECTION_NAME_PATTERN})-(?P<page>[1-9][0-9]*)\.(?P<ext>xml|txt)"
)


def section_name(text: str, default: str) -> str:
    """``text`` (a class or model name) as a section name, else ``default``."""
    return slugify(text) or default


def page_number(text: str) -> int | None:
    """The page ``text`` names as contrib's ``?p=`` gives it (ASCII digits,
    leading zeros allowed, as contrib reads them), or None when it names
    no page a file URL can have: empty, a sign, a non-ASCII digit
    (``"²"``), 0, or past ``MAX_PAGE``."""
    digits = text.lstrip("0")
    return int(digits) if PAGE_RE.fullmatch(digits) else None


def file_name(section: str, page: int, ext: str = "xml") -> str:
    """The name of file ``page`` of ``section``: ``sitemap-<section>-<page>.<ext>``."""
    return f"sitemap-{section}-{page}.{ext}"
