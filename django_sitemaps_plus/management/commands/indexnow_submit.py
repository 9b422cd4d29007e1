"""``manage.py indexnow_submit``: send the queued URLs to IndexNow.

Run it from cron every minute or two, or call ``indexnow.submit_pending()``
from a Celery task (docs/indexnow.md). ``--add URL`` queues URLs by hand, for
changes made without model signals. Exit codes (docs/commands.md): 0 nothing
failed, 1 URLs remain queued after failures or the endpoint rejected some,
2 bad usage (IndexNow not configured).
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_sitemaps_plus import indexnow
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.management.options import is_quiet, usage_error


class Command(BaseCommand):
    help = "Submit the URLs queued for IndexNow, in batches, with retries."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--add", nargs="+", metavar="URL", default=[], help="Queue these URLs first."
        )
        parser.add_argument(
            "--max-attempts",
            type=int,
            default=None,
            help="Attempts per batch (default: SITEMAPS_PLUS['INDEXNOW_MAX_ATTEMPTS']).",
        )
        parser.add_argument(
            "--force", action="store_true", help="Submit now even during a backoff."
        )
        parser.add_argument("--quiet", action="store_true", help="Print nothing but errors.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not conf.INDEXNOW_KEY:
            raise usage_error("Set SITEMAPS_PLUS['INDEXNOW_KEY'] first.")
        quiet = is_quiet(options)
        if options["add"]:
            indexnow.enqueue(options["add"])
        result = indexnow.submit_pending(
            max_attempts=options["max_attempts"], force=options["force"]
        )
        if result.skipped_until is not None:
            if not quiet:
                wait = max(0, int(result.skipped_until - time.time()))
                self.stdout.write(
                    f"Backing off after failures: {result.remaining} URL(s) wait {wait}s more "
                    "(--force to submit now)."
                )
            return
        if result.busy:
            if not quiet:
                self.stdout.write(
                    f"Another run is submitting; {result.remaining} URL(s) queued, left to it."
                )
            return
        if not quiet:
            self.stdout.write(
                f"Submitted {result.submitted} URL(s) in {result.requests} request(s); "
                f"{result.dropped} rejected, {result.remaining} still queued."
            )
        if result.errors:
            raise CommandError("; ".join(result.errors), returncode=1)
