"""``manage.py validate_sitemaps``: check sitemaps against the protocol,
Google's and Yandex's rules.

Exit status: 0 when no finding reaches ``--fail-level``, 1 when one does,
2 for bad usage or a target that cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import NoReverseMatch

from django_sitemaps_plus import protocol
from django_sitemaps_plus.fetch import DEFAULT_TIMEOUT, HttpFetcher, named_hosts
from django_sitemaps_plus.management.options import usage_error
from django_sitemaps_plus.management.progress import ProgressLine
from django_sitemaps_plus.validation import (
    UnknownRule,
    UnreadableTarget,
    validate,
    validate_site,
)
from django_sitemaps_plus.validation.engine import Progress, site_index_url
from django_sitemaps_plus.validation.report import (
    DEFAULT_MAX_FINDINGS,
    Report,
    render_json,
    render_text,
    summary_line,
)


def _positive(cast: Callable[[str], float], noun: str) -> Callable[[str], float]:
    """An argparse type: ``cast(value)`` when it is above 0, else a usage error."""

    def parse(value: str) -> float:
        try:
            number = cast(value)
        except ValueError:
            number = 0
        if not number > 0:
            raise argparse.ArgumentTypeError(f"expected a positive {noun}, got {value!r}")
        return number

    return parse


class _Tally:
    """The ``Progress`` of one validation per target, added up for one line."""

    def __init__(self, line: ProgressLine, targets: int) -> None:
        self.line = line
        #: Targets not started yet: a file each, at least.
        self.pending = targets
        self.files = self.urls = 0
        self.current = Progress()

    def next_target(self) -> None:
        self.files += self.current.files_done
        self.urls += self.current.urls
        self.current = Progress()
        self.pending -= 1

    def __call__(self, progress: Progress) -> None:
        self.current = progress
        self.line(
            self.files + progress.files_done,
            self.files + progress.files_total + self.pending,
            f"{self.urls + progress.urls:,} URLs",
        )


class Command(BaseCommand):
    help = (
        "Validate sitemaps: this site's own (rendered in-process, no server needed) or the "
        "given files (.xml, .xml.gz, .txt), '-' for stdin, or http(s) URLs. An index is "
        "followed to the sitemaps it lists."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "targets",
            nargs="*",
            metavar="TARGET",
            help="A file, '-' for stdin, or an http(s) URL. None: this site's sitemaps.",
        )
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument(
            "--fail-level",
            choices=("error", "warning", "info"),
            default="error",
            help="Exit 1 when a finding at or above this severity exists (default: error).",
        )
        parser.add_argument(
            "--base-url",
            help="The URL a local file or stdin is published at, e.g. "
            "https://example.com/sitemap.xml (enables the host and directory rules, and "
            "following a local index to the files beside it).",
        )
        parser.add_argument(
            "--max-findings",
            type=_positive(int, "integer"),
            default=DEFAULT_MAX_FINDINGS,
            help=f"Findings kept per file (all are counted; default {DEFAULT_MAX_FINDINGS:,}).",
        )
        parser.add_argument(
            "--ignore",
            action="append",
            default=[],
            metavar="RULE_ID",
            help="Skip a rule (repeatable), e.g. --ignore SM404.",
        )
        parser.add_argument(
            "--no-follow",
            action="store_false",
            dest="follow",
            help="Do not follow a sitemap index to the sitemaps it lists.",
        )
        parser.add_argument(
            "--allow-host",
            action="append",
            default=[],
            metavar="HOST",
            help="Fetch from HOST even when it resolves to a private, loopback or link-local "
            "address (the hosts of the URLs given are allowed already); repeatable.",
        )
        parser.add_argument(
            "--timeout",
            type=_positive(float, "number"),
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help=f"Seconds to wait to connect and for each read (default {DEFAULT_TIMEOUT:g}).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        base_url = options["base_url"]
        if base_url is not None and protocol.loc_problem(base_url) is not None:
            raise usage_error(f"--base-url must be an absolute http(s) URL, got {base_url!r}")
        settings = {
            "follow": options["follow"],
            "ignore": [rule_id.upper() for rule_id in options["ignore"]],
            "max_findings": options["max_findings"],
        }
        reports: list[Report] = []
        targets = options["targets"]
        line = ProgressLine(
            self.stderr, enabled=options["verbosity"] > 0, label="validate_sitemaps"
        )
        tally = _Tally(line, len(targets) or 1)
        try:
            if not targets:
                if base_url:
                    raise usage_error("--base-url applies to a TARGET")
                self._check_site_index_url()
                tally.next_target()
                reports.append(validate_site(on_progress=tally, **settings))
            # Hosts named on the command line may be private (an intranet,
            # localhost): by --allow-host, or as an address or localhost in a
            # target URL (a DNS name there is checked like any other).
            hosts = (urlsplit(target).hostname for target in targets if "://" in target)
            named = [*options["allow_host"], *named_hosts(hosts)]
            fetcher = HttpFetcher(timeout=options["timeout"], allow_hosts=named)
            for target in targets:
                tally.next_target()
                source = sys.stdin.buffer if target == "-" else target
                reports.append(
                    validate(
                        source, base_url=base_url, fetcher=fetcher, on_progress=tally, **settings
                    )
                )
        except (UnknownRule, UnreadableTarget) as exc:
            raise usage_error(str(exc)) from exc
        finally:
            line.finish()

        report = Report(files=[file for each in reports for file in each.files])
        render = render_json if options["format"] == "json" else render_text
        self.stdout.write(render(report), ending="")
        if report.fails(options["fail_level"]):
            raise CommandError(
                f"sitemap validation failed ({summary_line(report.summary())}) "
                f"at fail level {options['fail_level']!r}",
                returncode=1,
            )

    @staticmethod
    def _check_site_index_url() -> None:
        """Usage errors for a site whose sitemaps cannot be located."""
        try:
            site_index_url()
        except NoReverseMatch as exc:
            raise usage_error(
                "no sitemaps_plus URLs: include django_sitemaps_plus.urls in the "
                "URLconf, or give a TARGET"
            ) from exc
        except (ValueError, ObjectDoesNotExist) as exc:
            # No BASE_URL and no (current) site: the site's address is unknown.
            raise usage_error(
                f"cannot tell this site's base URL ({exc}): set "
                "SITEMAPS_PLUS['BASE_URL'] or give a TARGET"
            ) from exc
