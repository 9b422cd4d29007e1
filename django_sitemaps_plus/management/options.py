"""What the commands share: section names, usage errors and ``--quiet``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from django_sitemaps_plus.registry import site


def usage_error(message: str) -> CommandError:
    """A usage error: exit code 2 (docs/commands.md)."""
    return CommandError(message, returncode=2)


def is_quiet(options: dict[str, Any]) -> bool:
    """``--quiet`` or ``--verbosity 0``: print nothing but errors."""
    return bool(options["quiet"]) or options["verbosity"] == 0


def add_section_names(parser: CommandParser) -> None:
    """The ``SECTION ...`` arguments: section names, all sections when none."""
    parser.add_argument(
        "sections", nargs="*", metavar="SECTION", help="Section names (default: all)."
    )


def checked_section_names(names: list[str]) -> list[str]:
    """``names``, or a usage error naming the unknown ones and the registered sections."""
    unknown = [name for name in names if name not in site]
    if unknown:
        known = ", ".join(s.get_name() for s in site) or "none"
        raise usage_error(f"No such sitemap section: {', '.join(unknown)} (registered: {known}).")
    return names
