"""``manage.py validate_sitemaps``: formats, fail levels and exit codes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from django_sitemaps_plus import protocol
from django_sitemaps_plus.management.commands.validate_sitemaps import Command
from tests.build.test_build import Terminal, at_once  # noqa: F401 (a fixture)

SITE = "https://example.com"


def write_sitemap(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{protocol.SITEMAP_NS}">{body}</urlset>\n'
    )
    return path


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return write_sitemap(tmp_path, "clean.xml", f"<url><loc>{SITE}/</loc></url>")


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    # One error (priority), one warning (duplicate).
    return write_sitemap(
        tmp_path,
        "broken.xml",
        f"<url><loc>{SITE}/</loc><priority>3</priority></url><url><loc>{SITE}/</loc></url>",
    )


def run(*args: str) -> tuple[int, str, str]:
    """Run as ``manage.py`` would: the exit code from ``SystemExit``."""
    stdout, stderr = io.StringIO(), io.StringIO()
    command = Command(stdout=stdout, stderr=stderr)
    try:
        command.run_from_argv(["manage.py", "validate_sitemaps", *args])
    except SystemExit as exc:
        return int(exc.code or 0), stdout.getvalue(), stderr.getvalue()
    return 0, stdout.getvalue(), stderr.getvalue()


class TestExitCodes:
    def test_clean_file_exits_0(self, clean):
        code, out, _ = run(str(clean))
        assert code == 0
        assert out.endswith("0 errors, 0 warnings, 0 info\n")

    def test_error_exits_1(self, broken):
        code, out, err = run(str(broken))
        assert code == 1
        assert "SM406" in out
        assert "1 error, 1 warning, 0 info" in err

    def test_fail_level(self, tmp_path):
        warning_only = write_sitemap(
            tmp_path, "dup.xml", f"<url><loc>{SITE}/</loc></url><url><loc>{SITE}/</loc></url>"
        )
        assert run(str(warning_only))[0] == 0
        assert run(str(warning_only), "--fail-level", "warning")[0] == 1
        assert run(str(warning_only), "--fail-level", "warning", "--ignore", "SM313")[0] == 0

    def test_bad_usage_exits_2(self, clean):
        assert run(str(clean), "--fail-level", "fatal")[0] == 2
        assert run(str(clean), "--format", "yaml")[0] == 2
        assert run(str(clean), "--max-findings", "0")[0] == 2
        code, _, err = run(str(clean), "--ignore", "SM999")
        assert (code, "SM999" in err) == (2, True)
        code, _, err = run(str(clean), "--base-url", "example.com/sitemap.xml")
        assert (code, "--base-url" in err) == (2, True)
        assert run("--base-url", f"{SITE}/sitemap.xml")[0] == 2  # applies to a TARGET only

    def test_max_findings_says_how_many_more_were_not_shown(self, tmp_path):
        body = "".join(f"<url><loc>{SITE}/{i}</loc><priority>9</priority></url>" for i in range(5))
        path = write_sitemap(tmp_path, "many.xml", body)
        code, out, _ = run(str(path), "--max-findings", "2")
        assert code == 1
        assert out.count("SM406") == 2
        assert "  ... 3 more findings not shown (--max-findings)\n" in out
        assert out.endswith("5 errors, 0 warnings, 0 info\n")
        code, out, _ = run(str(path), "--max-findings", "4")
        assert "  ... 1 more finding not shown (--max-findings)\n" in out

    def test_unreadable_target_exits_2(self, tmp_path):
        code, _, err = run(str(tmp_path / "missing.xml"))
        assert code == 2
        assert "cannot read" in err


class TestOutput:
    def test_json_alone_on_stdout(self, broken, clean):
        code, out, _ = run(str(broken), str(clean), "--format", "json")
        assert code == 1
        data = json.loads(out)
        assert data["summary"] == {"errors": 1, "warnings": 1, "info": 0}
        first = data["files"][0]
        assert first["target"] == str(broken)
        assert set(first["findings"][0]) == {
            "rule",
            "title",
            "element",
            "severity",
            "source",
            "line",
            "column",
            "url",
            "message",
            "hint",
        }
        assert {f["rule"] for f in first["findings"]} == {"SM406", "SM313"}
        assert data["files"][1]["summary"] == {"errors": 0, "warnings": 0, "info": 0}

    def test_max_findings_and_base_url(self, tmp_path):
        body = "".join(f"<url><loc>{SITE}/{i}</loc><priority>7</priority></url>" for i in range(5))
        path = write_sitemap(tmp_path, "many.xml", body)
        code, out, _ = run(str(path), "--format", "json", "--max-findings", "2")
        data = json.loads(out)
        assert (code, len(data["files"][0]["findings"]), data["summary"]["errors"]) == (1, 2, 5)
        code, out, _ = run(
            str(path), "--format", "json", "--base-url", "https://other.example/sitemap.xml"
        )
        assert "SM310" in {f["rule"] for f in json.loads(out)["files"][0]["findings"]}

    def test_stdin(self, clean, monkeypatch):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(clean.read_bytes())))
        code, out, _ = run("-")
        assert code == 0
        assert "(urlset, 1 entry)" in out

    def test_local_index_followed_with_base_url(self, tmp_path, clean):
        index = tmp_path / "sitemap.xml"
        index.write_text(
            f'<sitemapindex xmlns="{protocol.SITEMAP_NS}">'
            f"<sitemap><loc>{SITE}/clean.xml</loc></sitemap>"
            f"<sitemap><loc>{SITE}/gone.xml</loc></sitemap></sitemapindex>"
        )
        code, out, _ = run(str(index), "--base-url", f"{SITE}/sitemap.xml", "--format", "json")
        data = json.loads(out)
        assert [f["target"] for f in data["files"]] == [str(index), str(clean)]
        # gone.xml is not beside the index: not checked (info), not broken.
        assert [f["rule"] for f in data["files"][0]["findings"]] == ["SM102", "SM603"]
        assert code == 0
        code, out, _ = run(str(index), "--base-url", f"{SITE}/sitemap.xml", "--no-follow")
        assert out.count("(sitemapindex, 2 entries)") == 1
        assert "(urlset" not in out


def write_index(path: Path, *names: str) -> Path:
    path.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{protocol.SITEMAP_NS}">'
        + "".join(f"<sitemap><loc>{SITE}/{name}</loc></sitemap>" for name in names)
        + "</sitemapindex>\n"
    )
    return path


class TestProgress:
    """Progress on stderr (files done of those known, URLs read) once a run
    takes more than a moment; stdout keeps the report alone."""

    @pytest.fixture
    def two_files(self, tmp_path: Path) -> Path:
        write_sitemap(tmp_path, "a.xml", f"<url><loc>{SITE}/1</loc></url>")
        write_sitemap(
            tmp_path, "b.xml", f"<url><loc>{SITE}/2</loc></url><url><loc>{SITE}/3</loc></url>"
        )
        return write_index(tmp_path / "sitemap.xml", "a.xml", "b.xml")

    @pytest.mark.usefixtures("at_once")
    def test_a_line_per_file_when_piped(self, two_files, clean):
        code, out, err = run(
            str(two_files), str(clean), "--base-url", f"{SITE}/sitemap.xml", "--format", "json"
        )
        assert code == 0
        assert len(json.loads(out)["files"]) == 4
        # The second target counts for one file until it is read.
        assert [line.rsplit(", ", 1)[0] for line in err.splitlines()] == [
            "validate_sitemaps: 1/4 files, 0 URLs",
            "validate_sitemaps: 2/4 files, 1 URLs",
            "validate_sitemaps: 3/4 files, 3 URLs",
            "validate_sitemaps: 4/4 files, 4 URLs",
        ]

    @pytest.mark.usefixtures("at_once")
    def test_a_bar_on_a_terminal(self, two_files):
        stderr = Terminal()
        command = Command(stdout=io.StringIO(), stderr=stderr)
        command.run_from_argv(
            ["manage.py", "validate_sitemaps", str(two_files), "--base-url", f"{SITE}/sitemap.xml"]
        )
        drawn = stderr.getvalue()
        assert drawn.count("\r[") == 3 and drawn.endswith("\n") and drawn.count("\n") == 1
        assert f"\r[{'#' * 30}] 3/3 files, 3 URLs" in drawn

    def test_nothing_when_quick_or_with_verbosity_0(self, two_files, monkeypatch):
        from django_sitemaps_plus.management import progress

        monkeypatch.setattr(progress, "DELAY", 3600.0)
        assert run(str(two_files))[2] == ""
        monkeypatch.setattr(progress, "DELAY", 0.0)
        assert run(str(two_files), "-v", "0")[2] == ""
        assert run(str(two_files), "--verbosity", "0")[2] == ""

    @pytest.mark.django_db
    @override_settings(ROOT_URLCONF="tests.validation.test_validation_http")
    @pytest.mark.usefixtures("at_once")
    def test_the_sites_own_files(self):
        err = io.StringIO()
        call_command("validate_sitemaps", stdout=io.StringIO(), stderr=err)
        # The index and its one file; then that file's text twin, known once the file was read.
        assert [line.rsplit(", ", 1)[0] for line in err.getvalue().splitlines()] == [
            "validate_sitemaps: 1/2 files, 0 URLs",
            "validate_sitemaps: 2/2 files, 2 URLs",
            "validate_sitemaps: 3/3 files, 4 URLs",
        ]


class TestCallCommand:
    def test_call_command_raises_command_error_with_returncode(self, broken, clean):
        out = io.StringIO()
        call_command("validate_sitemaps", str(clean), stdout=out)
        assert "no findings" in out.getvalue()
        with pytest.raises(CommandError) as info:
            call_command("validate_sitemaps", str(broken), stdout=io.StringIO())
        assert info.value.returncode == 1

    @pytest.mark.django_db
    @override_settings(ROOT_URLCONF="tests.validation.test_validation_http")
    def test_no_target_validates_the_site(self):
        out = io.StringIO()
        call_command("validate_sitemaps", "--format", "json", stdout=out)
        targets = [f["target"] for f in json.loads(out.getvalue())["files"]]
        assert targets[0] == f"{SITE}/sitemap.xml"
        assert len(targets) == 3

    @pytest.mark.django_db
    @override_settings(ROOT_URLCONF="tests.validation.test_validation_http")
    def test_no_target_with_an_unknown_rule_is_usage_error(self):
        with pytest.raises(CommandError, match="SM999") as info:
            call_command("validate_sitemaps", "--ignore", "sm999", stdout=io.StringIO())
        assert info.value.returncode == 2

    @pytest.mark.django_db
    @override_settings(ROOT_URLCONF="tests.validation.test_validation_http")
    def test_an_error_while_validating_is_not_blamed_on_the_base_url(self, monkeypatch):
        from django_sitemaps_plus.management.commands import validate_sitemaps

        def fail(**options: object) -> None:
            raise ValueError("a bug while validating")

        monkeypatch.setattr(validate_sitemaps, "validate_site", fail)
        with pytest.raises(ValueError, match="a bug while validating"):
            call_command("validate_sitemaps", stdout=io.StringIO())

    @override_settings(ROOT_URLCONF="tests.validation_urls")
    def test_no_target_without_urls_is_usage_error(self):
        with pytest.raises(CommandError) as info:
            call_command("validate_sitemaps", stdout=io.StringIO())
        assert info.value.returncode == 2

    @pytest.mark.django_db
    @override_settings(SITEMAPS_PLUS={}, ROOT_URLCONF="tests.validation.test_validation_http")
    def test_no_target_without_a_base_url_is_usage_error(self):
        from django.contrib.sites.models import Site

        Site.objects.all().delete()
        Site.objects.clear_cache()
        with pytest.raises(CommandError, match="BASE_URL") as info:
            call_command("validate_sitemaps", stdout=io.StringIO())
        assert info.value.returncode == 2


def test_each_finding_says_what_it_is_about(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "<url><loc>https://example.com/</loc><priority>1.5</priority></url>\n"
        "</urlset>\n"
    )
    code, out, _ = run(str(bad))
    assert code == 1
    (line,) = [text for text in out.splitlines() if "SM406" in text]
    assert "priority" in line.split("SM406", 1)[1]
    code, out, _ = run(str(bad), "--format", "json")
    (finding,) = [f for f in json.loads(out)["files"][0]["findings"] if f["rule"] == "SM406"]
    assert "priority" in finding["title"]
    assert finding["element"] == "priority"


def test_a_redirected_child_is_fetched_once():
    from django_sitemaps_plus.fetch import Fetched
    from django_sitemaps_plus.validation.engine import _Run

    index_body = (
        f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{protocol.SITEMAP_NS}">'
        f"<sitemap><loc>{SITE}/old.xml</loc></sitemap>"
        f"<sitemap><loc>{SITE}/new.xml</loc></sitemap></sitemapindex>"
    ).encode()
    child_body = (
        f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{protocol.SITEMAP_NS}">'
        f"<url><loc>{SITE}/a</loc></url></urlset>"
    ).encode()
    fetched: list[str] = []

    class Redirecting:
        def fetch(self, url: str) -> Fetched:
            fetched.append(url)
            if url.endswith("/sitemap.xml"):
                return Fetched(url, "application/xml", iter([index_body]), [])
            redirects = [(301, url, f"{SITE}/new.xml")] if url.endswith("/old.xml") else []
            return Fetched(f"{SITE}/new.xml", "application/xml", iter([child_body]), redirects)

    run = _Run(follow=True, ignore=(), max_findings=100, fetcher=Redirecting(), now=None)
    run.validate_url(f"{SITE}/sitemap.xml", depth=1)
    assert fetched == [f"{SITE}/sitemap.xml", f"{SITE}/old.xml"]
