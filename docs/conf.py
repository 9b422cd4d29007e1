"""Sphinx configuration: MyST Markdown pages, the furo theme, links into Django's docs.

Build with ``sphinx-build -W -b html docs docs/_build/html``. Where Django's
inventory cannot be downloaded (CI has no general internet access), set
``DOCS_OFFLINE=1``: references into Django's docs then render as plain text
instead of failing the build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
_project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

project = "django-sitemaps-plus"
author = "django-sitemaps-plus contributors"
copyright = "django-sitemaps-plus contributors"
# One version, in pyproject.toml.
release = _project["version"]
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.intersphinx",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

myst_enable_extensions = ["colon_fence", "deflist"]
# Headings up to ### get anchors, so [text](page.md#heading) links resolve.
myst_heading_anchors = 3

intersphinx_mapping: dict[str, tuple[str, str | None]] = {}
if not os.environ.get("DOCS_OFFLINE"):
    intersphinx_mapping["django"] = (
        "https://docs.djangoproject.com/en/stable/",
        "https://docs.djangoproject.com/en/stable/_objects/",
    )
    intersphinx_mapping["python"] = ("https://docs.python.org/3/", None)
intersphinx_timeout = 15

html_theme = "furo"
html_title = f"django-sitemaps-plus {release}"

# Keep this list short: every entry hides a class of real mistakes.
suppress_warnings: list[str] = []


def setup(app: Any) -> None:
    # Django's docs define :setting: targets; registering the same object type
    # lets {setting}`ROOT_URLCONF` link there through intersphinx, and lets
    # our own pages define settings with the {setting} directive.
    app.add_crossref_type(
        directivename="setting",
        rolename="setting",
        indextemplate="pair: %s; setting",
    )
