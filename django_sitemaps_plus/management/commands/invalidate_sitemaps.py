"""``manage.py invalidate_sitemaps [SECTION ...]``: make cached sitemap files stale.

For writes that send no model signals (``QuerySet.update()``,
``bulk_create()``, raw SQL, another service writing the tables): run it after
the import, or from the other service's deploy hook. Without a section name
every cached sitemap file is stale. Exit codes: 0 done, 2 bad usage (an
unknown section).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from django_sitemaps_plus.management.options import add_section_names, checked_section_names
from django_sitemaps_plus.serving.versions import invalidate


class Command(BaseCommand):
    help = "Make cached sitemap files stale: the named sections, or all of them."

    def add_arguments(self, parser: CommandParser) -> None:
        add_section_names(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        names = checked_section_names(options["sections"])
        invalidate(names or None)
        what = ", ".join(names) if names else "all sections"
        if options["verbosity"] >= 1:
            self.stdout.write(f"Invalidated cached sitemaps of {what}.")
