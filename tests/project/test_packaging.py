"""What a new user gets: the built wheel and sdist, their metadata, the README.

The README's Quick start is followed to the letter in a new project made with
the built wheel (``TestQuickStart``); its numbers and links are checked
against the code and the metadata PyPI shows.
"""

from __future__ import annotations

import ast
import configparser
import email
import os
import re
import shlex
import site
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from django_sitemaps_plus.validation.rules import RULES
from tests.wheel_contents import build, pip_install

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: A Markdown link's target: ``[text](target)``.
LINK = re.compile(r"\]\(([^)\s]+)\)")
#: Where PyPI's copy of README.md points its relative links.
REPOSITORY = "https://github.com/django-sitemaps-plus/django-sitemaps-plus"


def section(markdown: str, heading: str) -> str:
    """The text under ``## heading``, up to the next level-2 heading."""
    start = markdown.index(f"\n## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : None if end == -1 else end]


def code_blocks(markdown: str) -> list[tuple[str, str]]:
    """Each fenced block's language and text, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", markdown, flags=re.MULTILINE | re.DOTALL)


class TestReadme:
    def test_the_rule_count_is_the_code_s(self):
        (count,) = re.findall(r"against (\d+) rules", README)
        assert int(count) == len(RULES)

    def test_django_bounds_and_classifiers_are_what_tox_tests(self):
        tox = configparser.ConfigParser(interpolation=None)
        tox.read(ROOT / "tox.ini")
        tested = sorted(
            {
                Version(found)
                for found in re.findall(r"django\d+: Django>=([\d.]+),", tox["testenv"]["deps"])
            }
        )
        assert len(tested) >= 3
        (django,) = [
            Requirement(dep)
            for dep in PYPROJECT["project"]["dependencies"]
            if Requirement(dep).name.lower() == "django"
        ]
        series = [Version(f"{major}.{minor}") for major in (4, 5, 6, 7) for minor in range(3)]
        allowed = [v for v in series if django.specifier.contains(v)]
        assert allowed == tested  # 5.0, 5.1 and anything after the last tested excluded
        classifiers = {
            Version(c.rsplit(" :: ", 1)[1])
            for c in PYPROJECT["project"]["classifiers"]
            if re.fullmatch(r"Framework :: Django :: [\d.]+", c)
        }
        assert sorted(classifiers) == tested

    @pytest.mark.slow
    def test_the_docs_build_command_works_offline_too(self, tmp_path):
        # The README's command as written (the install aside), into a temporary
        # folder: where Django's and Python's docs cannot be reached (this
        # machine, CI) docs/conf.py leaves intersphinx out rather than failing.
        for module in ("sphinx", "myst_parser", "furo"):
            pytest.importorskip(module)
        (block,) = [
            text for _, text in code_blocks(section(README, "Documentation")) if "sphinx" in text
        ]
        command = shlex.split(block.split("&&")[1])
        assert command[0] == "sphinx-build" and command[-2:] == ["docs", "docs/_build/html"]
        command = [str(Path(sys.executable).with_name("sphinx-build")), *command[1:-1]]
        done = subprocess.run(
            [*command, "-q", str(tmp_path / "html")],
            cwd=ROOT,
            env={k: v for k, v in os.environ.items() if k != "DOCS_OFFLINE"},
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert (tmp_path / "html" / "migration.html").is_file()


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The wheel and the sdist, built once for this module's tests."""
    return build(ROOT, tmp_path_factory.mktemp("dist"))


@pytest.mark.slow
class TestDistributions:
    def test_both_hold_the_license(self, dists):
        wheel, sdist = dists
        license_text = (ROOT / "LICENSE").read_bytes()
        assert b"MIT License" in license_text
        assert b"django-sitemaps-plus contributors" in license_text
        with zipfile.ZipFile(wheel) as archive:
            (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
            assert archive.read(name) == license_text
        with tarfile.open(sdist) as archive:
            member = archive.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/LICENSE")
            assert member is not None and member.read() == license_text

    def test_both_hold_every_module(self, dists):
        """Every module of the checkout ships (a .gitignore pattern such as
        ``build/`` once left the package ``build`` out of both)."""
        wheel, sdist = dists
        modules = {
            path.relative_to(ROOT).as_posix()
            for path in (ROOT / "django_sitemaps_plus").rglob("*.py")
            if "__pycache__" not in path.parts
        }
        assert "django_sitemaps_plus/build/__init__.py" in modules
        with zipfile.ZipFile(wheel) as archive:
            assert modules - set(archive.namelist()) == set()
        top = sdist.name.removesuffix(".tar.gz")
        with tarfile.open(sdist) as archive:
            shipped = {name.removeprefix(f"{top}/") for name in archive.getnames()}
        assert modules - shipped == set()

    def test_metadata(self, dists):
        metadata = wheel_metadata(dists[0])
        assert metadata["License-Expression"] == "MIT"
        assert metadata["License-File"] == "LICENSE"
        urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
        assert urls == {
            "Homepage": REPOSITORY,
            "Documentation": f"{REPOSITORY}/tree/main/docs",
            "Changelog": f"{REPOSITORY}/blob/main/CHANGELOG.md",
            "Issues": f"{REPOSITORY}/issues",
        }
        django = next(r for r in metadata.get_all("Requires-Dist") if r.startswith("django"))
        assert not Requirement(django).specifier.contains("5.1")

    def test_pypi_s_readme_has_no_relative_links(self, dists):
        description = wheel_metadata(dists[0]).get_payload()
        assert isinstance(description, str)
        ours = LINK.findall(README)
        theirs = LINK.findall(description)
        assert [t for t in ours if not t.startswith(("https://", "http://"))], "nothing to check"
        assert [t for t in theirs if not t.startswith(("https://", "http://"))] == []
        # Every link kept, each pointing where the checkout's does.
        assert theirs == [
            target
            if target.startswith(("https://", "http://"))
            else f"{REPOSITORY}/blob/main/{target}"
            for target in ours
        ]


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


class _Project:
    """A new project in its own venv: the built wheel, Django and lxml from here."""

    def __init__(self, root: Path, wheel: Path) -> None:
        self.root = root
        self.venv = root / "venv"
        self.dir = root / "mysite"
        self.wheel = wheel
        # The environment of a shell in the new project: none of this suite's.
        self.env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")
        }
        venv.create(self.venv, system_site_packages=True, with_pip=False)
        self.python = self.venv / "bin" / "python"
        purelib = self.run_python("-c", "import sysconfig; print(sysconfig.get_path('purelib'))")
        # --system-site-packages gives the base interpreter's packages; when the
        # running one is itself a venv, its own come in by a path file (as plain
        # paths: a checkout's editable install there is not picked up).
        Path(purelib.strip(), "_running_interpreter.pth").write_text(
            "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
        )
        self.dir.mkdir()

    def run_python(self, *args: str, cwd: Path | None = None, check: bool = True) -> str:
        done = subprocess.run(
            [str(self.python), *args],
            cwd=cwd or self.root,
            env=self.env,
            capture_output=True,
            text=True,
        )
        if check:
            assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}{done.stderr}"
        return done.stdout

    def manage(self, *args: str) -> str:
        return self.run_python("manage.py", *args, cwd=self.dir)

    def shell(self, line: str) -> None:
        """Run one line of a README ``bash`` block."""
        words = shlex.split(line, comments=True)
        if not words:
            return
        if words == ["pip", "install", "django-sitemaps-plus"]:
            # The built wheel stands for the release on PyPI. --ignore-installed:
            # where the running environment has the package installed (tox), pip
            # would see it through the path file and install nothing.
            pip_install(
                self.python, "--no-deps", "--ignore-installed", str(self.wheel), env=self.env
            )
        elif words[:2] == ["python", "manage.py"]:
            self.manage(*words[2:])
        else:
            pytest.fail(f"the Quick start test does not know how to follow {line!r}")

    def write(self, block: str) -> None:
        """Add a README ``python`` block to the file its first line names.

        ``...`` in a list assigned to a name stands for what the file already
        holds there: ``X = [..., "a"]`` becomes ``X = [*X, "a"]``.
        """
        first = block.splitlines()[0]
        assert first.startswith("# "), f"a Quick start block names no file: {first!r}"
        name = first[2:].strip()
        path = self.dir / ("mysite/" + name if "/" not in name else name)
        tree = ast.parse(block)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.List)
            ):
                node.value.elts = [
                    ast.Starred(ast.Name(node.targets[0].id, ast.Load()), ast.Load())
                    if isinstance(e, ast.Constant) and e.value is Ellipsis
                    else e
                    for e in node.value.elts
                ]
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text(f"{before}\n{ast.unparse(ast.fix_missing_locations(tree))}\n", "utf-8")


PROBE = """
import django_sitemaps_plus, sys
from pathlib import Path
assert Path(django_sitemaps_plus.__file__).is_relative_to(sys.prefix), django_sitemaps_plus.__file__
from django.test import Client
from blog.models import Article, Comment
article = Article.objects.create(title="Hello", slug="hello", body="...", is_published=True)
Comment.objects.create(article=article, text="First")
client = Client(HTTP_HOST="localhost")
index = client.get("/sitemap.xml")
assert index.status_code == 200, index
print(b"".join(index.streaming_content if index.streaming else [index.content]).decode())
articles = client.get("/sitemap-articles-1.xml")
print(b"".join(articles.streaming_content if articles.streaming else [articles.content]).decode())
"""


PROBE_MISSING = """
from django.test import Client
client = Client(HTTP_HOST="localhost")
index = client.get("/sitemap.xml")
assert index.status_code == 200, index
print(b"".join(index.streaming_content if index.streaming else [index.content]).decode())
print("missing file:", client.get("/sitemap-missing-1.xml").status_code)
"""


@pytest.fixture(scope="module")
def project(dists: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> _Project:
    """A new project (``django-admin startproject mysite .``, as the README
    says), then every block of the README's Quick start, in order."""
    project = _Project(tmp_path_factory.mktemp("quickstart"), dists[0])
    project.run_python("-m", "django", "startproject", "mysite", ".", cwd=project.dir)
    for language, text in code_blocks(section(README, "Quick start")):
        if language == "bash":
            for line in text.splitlines():
                project.shell(line)
        elif language == "python":
            project.write(text)
        else:
            assert language == "text"  # robots.txt
    return project


@pytest.mark.slow
class TestQuickStart:
    def test_system_checks_pass(self, project):
        assert "System check identified no issues" in project.manage("check")

    def test_the_sitemap_lists_both_sections_and_validates(self, project):
        out = project.manage("shell", "-c", PROBE)
        assert "https://www.example.com/sitemap-pages-1.xml" in out
        assert "https://www.example.com/sitemap-articles-1.xml" in out
        assert "<loc>https://www.example.com/blog/hello/</loc>" in out
        # The site's own sitemaps, in-process on BASE_URL's host, which the new
        # project's ALLOWED_HOSTS does not list.
        report = project.manage("validate_sitemaps")
        assert "sitemap-articles-1.xml" in report
        assert report.strip().splitlines()[-1] == "0 errors, 0 warnings, 0 info", report

    def test_a_section_of_url_names_the_project_lacks_is_checked_and_not_listed(self, project):
        """The Quick start's first draft named ``pages:home``, which a new
        project lacks: ``check`` says so (W008) and the index leaves the
        section out rather than list a file that answers 404. Runs last: it
        adds the section to the project."""
        sitemaps = project.dir / "blog" / "sitemaps.py"
        sitemaps.write_text(
            sitemaps.read_text(encoding="utf-8")
            + "\n\n@register\nclass MissingPages(Section):\n"
            + '    name = "missing"\n\n'
            + "    def items(self):\n"
            + '        return ["pages:home", "pages:about"]\n\n'
            + "    def location(self, item):\n"
            + "        return reverse(item)\n",
            encoding="utf-8",
        )
        check = subprocess.run(
            [str(project.python), "manage.py", "check"],
            cwd=project.dir,
            env=project.env,
            capture_output=True,
            text=True,
        )
        # A warning: reported on stderr, and the command still succeeds.
        assert check.returncode == 0
        assert "sitemaps_plus.W008" in check.stderr
        out = project.manage("shell", "-c", PROBE_MISSING)
        assert "https://www.example.com/sitemap-articles-1.xml" in out
        assert "sitemap-missing-1.xml" not in out
        assert "missing file: 404" in out
