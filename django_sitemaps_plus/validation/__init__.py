"""Validate sitemaps against the protocol, Google's and Yandex's rules.

``validate()`` checks bytes, a file, a stream or a URL (following an index),
``validate_site()`` this site's own sitemaps in-process, and
``assert_valid_sitemap()`` raises ``AssertionError`` for use in tests. Every
rule has a stable id in ``RULES`` (see docs/validation.md).

Importing it loads lxml and the validator; the writers import only
``django_sitemaps_plus.extensions.rules``, which loads neither.
"""

from __future__ import annotations

from django_sitemaps_plus.validation.engine import (
    Progress,
    UnknownRule,
    UnreadableTarget,
    assert_valid_sitemap,
    validate,
    validate_site,
)
from django_sitemaps_plus.validation.report import FileReport, Finding, Report
from django_sitemaps_plus.validation.rules import RULES, Rule, Severity, Source

__all__ = [
    "RULES",
    "FileReport",
    "Finding",
    "Progress",
    "Report",
    "Rule",
    "Severity",
    "Source",
    "UnknownRule",
    "UnreadableTarget",
    "assert_valid_sitemap",
    "validate",
    "validate_site",
]
