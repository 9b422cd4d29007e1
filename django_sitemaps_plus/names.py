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
#: The name of a section's file, with its section, page number and format.
FILE_NAME_RE: Final = re.compile(
    rf"sitemap-(?P<section>{SECTION_NAME_PATTERN})-(?P<page>[1-9][0-9]*)\.(?P<ext>xml|txt)"
)


def section_name(text: str, default: str) -> str:
    """``text`` (a class or model name) as a section name, else ``default``."""
    return slugify(text) or default


def file_name(section: str, page: int, ext: str = "xml") -> str:
    """The name of file ``page`` of ``section``: ``sitemap-<section>-<page>.<ext>``."""
    return f"sitemap-{section}-{page}.{ext}"
