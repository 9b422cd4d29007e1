"""Check that the installed package holds every file of the checkout's.

tox installs the built wheel, but the suite imports the package from the
checkout (``tests.settings`` needs the repository root on ``sys.path``), so a
file the wheel leaves out (a schema, ``py.typed``) would go unnoticed there.
Run in isolated mode, from outside the checkout::

    python -I tests/wheel_contents.py /path/to/checkout

``build()`` builds the wheel and the sdist as a front end does (the
``[build-system]`` requirements in an environment of their own), for the tests
of what they hold (tests/project/test_packaging.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

#: Builds both distributions with the backend's PEP 517 hooks; prints their names.
_BUILD = """
import json, sys
backend = __import__(sys.argv[1], fromlist=["_"])
print(json.dumps([backend.build_wheel(sys.argv[2]), backend.build_sdist(sys.argv[2])]))
"""


def pip_install(python: Path, *args: str, env: dict[str, str] | None = None) -> None:
    """``pip install args`` into the environment of ``python`` (which needs no
    pip of its own), with the running interpreter's pip."""
    command = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", *args]
    subprocess.run(command, check=True, env=env)


def build(checkout: Path, out: Path) -> tuple[Path, Path]:
    """Build ``checkout``'s wheel and sdist into ``out``; return their paths.

    The build requirements are installed by the running interpreter's pip into
    a fresh environment under ``out`` (from the configured index, which may be
    a local one), and the backend runs there with the checkout as its working
    directory, as ``pip wheel`` and ``python -m build`` run it.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    build_system = tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))[
        "build-system"
    ]
    env = out / "build-env"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    pip_install(python, *build_system["requires"])
    environ = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    built = subprocess.run(
        [str(python), "-c", _BUILD, build_system["build-backend"], str(out)],
        cwd=checkout,
        env=environ,
        check=True,
        capture_output=True,
        text=True,
    )
    names = json.loads(built.stdout.strip().splitlines()[-1])
    return out / names[0], out / names[1]


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
