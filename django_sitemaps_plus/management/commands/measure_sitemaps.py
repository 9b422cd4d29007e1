"""``manage.py measure_sitemaps [SECTION ...]``: measure sections' blocks.

Requests never render to measure: until its blocks are measured, a section
sized by measure has its files laid out by the worst case, in smaller files.
This renders and keeps the blocks the sitemap cache does not hold under their
current fingerprint (docs/commands.md). Exit codes: 0 done, 2 bad usage (an
unknown section).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from django_sitemaps_plus.engine import measuring
from django_sitemaps_plus.management.options import add_section_names, checked_section_names
from django_sitemaps_plus.registry import site
from django_sitemaps_plus.sites import site_context


class Command(BaseCommand):
    help = "Measure the blocks of sections sized by measure, so their files are full."

    def add_arguments(self, parser: CommandParser) -> None:
        add_section_names(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        names = checked_section_names(options["sections"])
        context = site_context(None)
        for section in site:
            name = section.get_name()
            if names and name not in names:
                continue
            measured = measuring.measure_blocks(section, context)
            if options["verbosity"] >= 1:
                self.stdout.write(f"{name}: {section.file_sizing()}, {measured} blocks measured.")
