"""``manage.py build_sitemaps``: write every sitemap file to a storage.

    manage.py build_sitemaps                      # BUILD_STORAGE or BUILD_DIR
    manage.py build_sitemaps --dir /srv/sitemaps --gzip
    manage.py build_sitemaps --storage sitemaps   # an alias of STORAGES
    manage.py build_sitemaps --from-urls urls.txt --dir out [--format txt]
    manage.py build_sitemaps --enqueue --wait     # task workers build; follow them
    manage.py build_sitemaps --enqueue --enqueue-on celery --queue sitemaps
    manage.py build_sitemaps --wait               # follow the build running now

Only files whose content changed are rewritten. ``--wait`` follows a build
from the storage alone (the plan and its jobs' records), so it works on any
machine that reaches the storage. Progress, ``--quiet`` and the exit codes (0
success; 1 failed, stalled, timed out or replaced; 2 bad usage; 3 another
build of the storage is running): docs/commands.md.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from django.core.exceptions import ImproperlyConfigured
from django.core.files.storage import Storage
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from django_sitemaps_plus.build import (
    BuildFailed,
    BuildResult,
    BuildRunning,
    UrlListError,
    build,
    generate_from_urls,
    status,
)
from django_sitemaps_plus.management.options import is_quiet, usage_error
from django_sitemaps_plus.management.progress import ProgressLine
from django_sitemaps_plus.serving.storage import get_build_storage
from django_sitemaps_plus.sites import SiteContext, site_context
from django_sitemaps_plus.tasks import enqueue_build


class Command(BaseCommand):
    help = (
        "Write every sitemap file (and the index) to a storage; or, with --from-urls, "
        "turn a list of URLs into sitemap files."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--storage", help="An alias of settings.STORAGES to write to.")
        where.add_argument("--dir", help="A directory (FileSystemStorage) to write to.")
        parser.add_argument(
            "--gzip",
            action="store_true",
            default=None,
            help="Also write a .gz beside each file (default: SITEMAPS_PLUS['BUILD_GZIP']).",
        )
        parser.add_argument(
            "--text", action="store_true", help="Also write each section file as .txt."
        )
        parser.add_argument(
            "--force", action="store_true", help="Rewrite files whose content did not change."
        )
        parser.add_argument(
            "--base-url", help="Scheme and host of every URL (default: BASE_URL or Sites)."
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=1,
            metavar="N",
            help="Render the files in N worker processes (default 1; 0: one per CPU).",
        )
        parser.add_argument(
            "--enqueue",
            action="store_true",
            help="Enqueue the file jobs on Django's Tasks framework (TASKS) or on Celery "
            "(--enqueue-on): task workers build the files, the last one writes the index.",
        )
        parser.add_argument(
            "--enqueue-on",
            choices=["tasks", "celery"],
            default=None,
            help="With --enqueue: Django's Tasks framework (tasks, the default) or the "
            "current Celery app (celery).",
        )
        parser.add_argument(
            "--backend",
            help="With --enqueue on the Tasks framework: the TASKS backend alias "
            "(default: default).",
        )
        parser.add_argument("--queue", help="With --enqueue: the queue name.")
        parser.add_argument(
            "--wait",
            action="store_true",
            help="Follow the build until its index is written (progress on stderr): with "
            "--enqueue the one enqueued, alone the one running now on this storage.",
        )
        parser.add_argument(
            "--stalled-after",
            type=float,
            default=None,
            metavar="SECONDS",
            help="With --wait: fail (naming the files not built) when no file job finishes "
            f"for this long (default {status.STALLED_AFTER:.0f}).",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=None,
            metavar="SECONDS",
            help="With --wait: fail when the build has not finished after this long "
            "(default: no limit but --stalled-after).",
        )
        parser.add_argument("--quiet", action="store_true", help="Print nothing but errors.")
        parser.add_argument(
            "--format",
            choices=["text", "json", "xml", "txt"],
            default=None,
            help="Report as text (default) or json; with --from-urls, the files' format: "
            "xml (default) or txt.",
        )
        parser.add_argument(
            "--from-urls",
            metavar="FILE",
            help="Generator mode: a file of absolute URLs, one per line ('-': stdin).",
        )
        parser.add_argument(
            "--lastmod",
            help="With --from-urls: one W3C Datetime given to every URL. It must be the "
            "date their content really changed.",
        )
        parser.add_argument(
            "--url-prefix",
            help="With --from-urls: the path the files are served under (default /).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["from_urls"]:
            # Before the storage is looked up: its error would hide this one.
            if options["format"] in ("xml", "txt"):
                raise usage_error(
                    f"--format {options['format']} needs --from-urls FILE (it is the format "
                    "of the files made from a list of URLs); a build reports as --format "
                    "text or json."
                )
            for option in ("lastmod", "url_prefix"):
                if options[option] is not None:
                    flag = "--" + option.replace("_", "-")
                    raise usage_error(f"{flag} needs --from-urls FILE.")
        try:
            storage = get_build_storage(options["storage"], options["dir"])
        except (ImproperlyConfigured, KeyError) as exc:
            raise usage_error(str(exc)) from exc
        if options["from_urls"]:
            self._from_urls(storage, options)
            return
        if options["enqueue"] and options["jobs"] != 1:
            raise usage_error("--enqueue and --jobs: task workers build the files.")
        enqueue_options = options["backend"] or options["queue"] or options["enqueue_on"]
        if enqueue_options and not options["enqueue"]:
            raise usage_error("--enqueue-on, --backend and --queue go with --enqueue.")
        if options["backend"] and options["enqueue_on"] == "celery":
            raise usage_error(
                "--backend names a TASKS backend: it does not go with --enqueue-on celery."
            )
        if options["jobs"] < 0:
            raise usage_error("--jobs: 0 (one per CPU) or more.")
        quiet = is_quiet(options)
        if not options["wait"] and (
            options["stalled_after"] is not None or options["timeout"] is not None
        ):
            raise usage_error("--stalled-after and --timeout go with --wait.")
        if options["wait"] and not options["enqueue"]:
            if options["jobs"] != 1:
                raise usage_error(
                    "--wait without --enqueue follows a running build; --jobs builds."
                )
            self._wait(storage, None, options, quiet)
            return
        if options["base_url"]:
            site = SiteContext(options["base_url"].rstrip("/"))
        else:
            try:
                site = site_context(None)
            except ValueError as exc:
                raise usage_error(f"{exc} Or pass --base-url.") from exc
        if options["enqueue"]:
            self._enqueue(storage, site, options, quiet)
            return
        line = ProgressLine(self.stderr, enabled=not quiet, label="build_sitemaps")
        result = BuildResult()

        def progress(done: int, total: int, name: str) -> None:
            line(done, total, f"{len(result.written):,} written, {result.urls:,} URLs")

        try:
            build(
                storage,
                site=site,
                gzip=options["gzip"],
                text=options["text"],
                force=options["force"],
                progress=progress,
                result=result,
                jobs=options["jobs"],
            )
        except BuildRunning as exc:
            raise CommandError(f"{exc} Nothing was written.", returncode=3) from exc
        except (BuildFailed, ValueError, OSError, ImproperlyConfigured, DatabaseError) as exc:
            cause = exc.__cause__ if isinstance(exc, BuildFailed) else exc
            where = " (database)" if isinstance(cause, DatabaseError) else ""
            raise CommandError(f"Build failed{where}, previous files left intact: {exc}") from exc
        finally:
            line.finish()
        self._report(result, options, quiet)

    def _enqueue(
        self, storage: Storage, site: SiteContext, options: dict[str, Any], quiet: bool
    ) -> None:
        try:
            plan, enqueued = enqueue_build(
                storage_alias=options["storage"],
                directory=options["dir"],
                site=site,
                gzip=options["gzip"],
                text=options["text"],
                force=options["force"],
                enqueue_on=options["enqueue_on"] or "tasks",
                backend=options["backend"],
                queue_name=options["queue"],
            )
        except (ImportError, ImproperlyConfigured) as exc:
            raise usage_error(str(exc)) from exc
        except ConnectionError as exc:  # Celery's broker
            raise CommandError(str(exc)) from exc
        except BuildRunning as exc:
            raise CommandError(f"{exc} Nothing was enqueued.", returncode=3) from exc
        report: dict[str, Any] = {
            "generation": plan.generation,
            "jobs": len(plan.jobs),
            "enqueued": enqueued,
        }
        if options["wait"]:
            self._wait(storage, plan.generation, options, quiet, report)
        elif options["format"] == "json":
            self.stdout.write(json.dumps(report))
        elif not quiet:
            self.stdout.write(
                f"Enqueued {enqueued} of {len(plan.jobs)} file jobs (plan {plan.generation}); "
                "the last one to finish writes the index."
            )

    def _wait(
        self,
        storage: Storage,
        generation: str | None,
        options: dict[str, Any],
        quiet: bool,
        report: dict[str, Any] | None = None,
    ) -> None:
        """Follow the build ``generation`` (None: the one running now) until
        its index is written; report the last build then."""
        line = ProgressLine(
            self.stderr, enabled=not quiet, label="build_sitemaps", clock=status.clock
        )
        stalled = options["stalled_after"]
        try:
            seen = status.wait(
                storage,
                generation=generation,
                progress=line,
                stalled_after=status.STALLED_AFTER if stalled is None else stalled,
                timeout=options["timeout"],
            )
        except status.WaitFailed as exc:
            raise CommandError(f"{exc} The previous files are still served.") from exc
        finally:
            line.finish()
        if seen is None and generation is None:
            message = "No build is running on this storage."
        else:
            message = "The index is written."
        last = status.last_build(storage)
        report = {**(report or {}), "waited": seen is not None or generation is not None}
        report.update({k: last.get(k) for k in ("files", "urls")})
        if options["format"] == "json":
            self.stdout.write(json.dumps(report))
        elif not quiet:
            figures = (
                f" The last build: {last['files']} files ({last['urls']:,} URLs)."
                if last.get("files") is not None
                else ""
            )
            self.stdout.write(message + figures)

    def _report(self, result: BuildResult, options: dict[str, Any], quiet: bool) -> None:
        if options["format"] == "json":
            self.stdout.write(json.dumps(result.as_dict()))
            return
        if quiet:
            return
        listed = [("removed", result.removed)]
        if options["verbosity"] >= 2:
            listed[:0] = [
                ("wrote", result.written),
                ("skipped", result.skipped),
                ("resumed", result.resumed),
            ]
        for label, files in listed:
            for name in files:
                self.stdout.write(f"{label:<8} {name}")
        self.stdout.write(
            f"{result.files} files ({result.urls:,} URLs): {len(result.written)} written, "
            f"{len(result.skipped)} unchanged, "
            + (f"{len(result.resumed)} resumed, " if result.resumed else "")
            + f"{len(result.removed)} removed "
            f"in {result.seconds:.1f}s."
        )

    def _from_urls(self, storage: Any, options: dict[str, Any]) -> None:
        fmt = options["format"] or "xml"
        if fmt not in ("xml", "txt"):
            raise usage_error("--from-urls writes --format xml or txt.")
        path = options["from_urls"]
        try:
            handle: TextIO = (
                sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
            )
        except OSError as exc:
            raise usage_error(f"Cannot read {path}: {exc}") from exc
        quiet = is_quiet(options)
        if options["lastmod"] and not quiet:
            self.stderr.write(
                f"Every URL gets lastmod {options['lastmod']}. Use it only if all these pages "
                "really changed on that date: search engines stop trusting a site whose "
                "lastmod is not accurate."
            )
        try:
            with handle:
                generated = generate_from_urls(
                    handle,
                    storage,
                    fmt=fmt,
                    lastmod=options["lastmod"],
                    url_prefix=options["url_prefix"] or "/",
                )
        except UrlListError as exc:
            raise CommandError(str(exc), returncode=2 if "lastmod" in str(exc) else 1) from exc
        for line, text, why in generated.rejected:
            self.stderr.write(f"line {line}: {text[:120]!r} {why}; skipped")
        if not quiet:
            self.stdout.write(
                f"Wrote {', '.join(generated.files)} ({generated.urls:,} URLs). Add to robots.txt:"
            )
        for robots_line in generated.robots_lines:
            self.stdout.write(robots_line)
        if generated.rejected:
            raise CommandError(
                f"{len(generated.rejected)} line(s) rejected; the other URLs were written.",
                returncode=1,
            )
