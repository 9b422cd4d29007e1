"""Check that the installed package holds every file of the checkout's.

tox installs the built wheel, but the suite imports the package from the
checkout (``tests.settings`` needs the repository root on ``sys.path``), so a
file the wheel leaves out (a schema, ``py.typed``) would go unnoticed there.
Run in isolated mode, from outside the checkout::

    python -I tests/wheel_contents.py /path/to/checkout
"""

from __future__ import annotations

import sys
from pathlib import Path


def package_files(root: Path) -> set[str]:
    return {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def main() -> int:
    checkout = Path(sys.argv[1]).resolve() / "django_sitemaps_plus"
    import django_sitemaps_plus

    installed = Path(django_sitemaps_plus.__file__).resolve().parent
    if installed == checkout:
        print(f"the package was imported from the checkout ({installed}), not the install")
        return 1
    missing = sorted(package_files(checkout) - package_files(installed))
    if missing:
        print(f"missing from the installed package at {installed}:", *missing, sep="\n  ")
        return 1
    print(f"installed package at {installed} holds all {len(package_files(checkout))} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
