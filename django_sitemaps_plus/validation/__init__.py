"""Validate sitemaps against the protocol, Google's and Yandex's rules.

``validate()`` checks bytes, a file, a stream or a URL (following an index),
``validate_site()`` this site's own sitemaps in-process, and
``assert_valid_sitemap()`` raises ``AssertionError`` for use in tests. Every
rule has a stable id in ``RULES`` (see docs/validation.md).

The names are imported on first use: the extensions' rules
(``django_sitemaps_plus.extensions.rules``) use this package's value checks,
and a writer importing them loads neither lxml nor the validator's engine.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_MODULES = {
    "Progress": "engine",
    "UnknownRule": "engine",
    "UnreadableTarget": "engine",
    "assert_valid_sitemap": "engine",
    "validate": "engine",
    "validate_site": "engine",
    "FileReport": "report",
    "Finding": "report",
    "Report": "report",
    "RULES": "rules",
    "Rule": "rules",
    "Severity": "rules",
    "Source": "rules",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
