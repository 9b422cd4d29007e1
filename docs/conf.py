"""Sphinx configuration: MyST Markdown pages, the furo theme, links into Django's docs.

Build with ``sphinx-build -W -b html docs docs/_build/html``. Where Django's
and Python's inventories cannot be downloaded (CI has no general internet
access, a laptop on a train) the build leaves intersphinx out by itself:
references into those docs then render as plain text instead of failing the
build. ``DOCS_OFFLINE=1`` skips the attempt (no connection tried).
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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

intersphinx_timeout = 15
_INVENTORIES: dict[str, tuple[str, str | None]] = {
    "django": (
        "https://docs.djangoproject.com/en/stable/",
        "https://docs.djangoproject.com/en/stable/_objects/",
    ),
    "python": ("https://docs.python.org/3/", None),
}


def _reachable(url: str) -> bool:
    """Whether ``url``'s host accepts a connection (a failed inventory
    download is a warning, which -W makes an error)."""
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port or 443), timeout=5).close()
    except OSError:
        return False
    return True


intersphinx_mapping: dict[str, tuple[str, str | None]] = {}
if not os.environ.get("DOCS_OFFLINE"):
    intersphinx_mapping = {
        name: inventory for name, inventory in _INVENTORIES.items() if _reachable(inventory[0])
    }
    for name in sorted(_INVENTORIES.keys() - intersphinx_mapping.keys()):
        print(f"docs/conf.py: {_INVENTORIES[name][0]} unreachable, no links into it")

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
