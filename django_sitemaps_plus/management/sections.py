"""What the commands that take section names share."""

from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from django_sitemaps_plus.registry import site


def add_section_names(parser: CommandParser) -> None:
    """The ``SECTION ...`` arguments: section names, all sections when none."""
    parser.add_argument(
        "sections", nargs="*", metavar="SECTION", help="Section names (default: all)."
    )


def checked_section_names(names: list[str]) -> list[str]:
    """``names``, or a ``CommandError`` (exit code 2) naming the unknown ones
    and the registered sections."""
    unknown = [name for name in names if name not in site]
    if unknown:
        known = ", ".join(s.get_name() for s in site) or "none"
        raise CommandError(
            f"No such sitemap section: {', '.join(unknown)} (registered: {known}).",
            returncode=2,
        )
    return names
