"""The layout's signature: what a kept layout and measured blocks are keyed
by besides the rows (layout.py, docs/pagination.md)."""

from __future__ import annotations

import datetime as dt
import enum
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.db.models import Prefetch

from django_sitemaps_plus import ModelSection, protocol
from django_sitemaps_plus.engine import fingerprints, measuring
from django_sitemaps_plus.extensions.base import Extension
from django_sitemaps_plus.sites import SiteContext
from tests.testapp.models import Article, Tag
from tests.utils import articles, measured_runs

SITE = SiteContext("https://example.com")


class Tone(enum.Enum):
    PLAIN = "plain"
    LOUD = "loud"


def shout(text: str) -> str:
    return text.upper()


class Opaque:
    """An object with the default repr (its address)."""

    def __init__(self, level: int) -> None:
        self.level = level
        self._seen: dict[str, int] = {}


class Tagged(Extension):
    """Writes one ``<x:tag>`` per tag: its settings are a tuple and more."""

    prefix = "x"
    namespace = "https://example.com/x"

    def __init__(self, tags: tuple[str, ...]) -> None:
        self.tags = tags
        self.languages = {"fr", "de", "en", "it", "es"}
        self.codes = {"en": "en-GB", "de": "de-DE"}
        self.since = dt.date(2024, 1, 1)
        self.tone = Tone.PLAIN
        self.transform = shout
        self.policy = Opaque(1)
        self.prefetch = [Prefetch("tags", queryset=Tag.objects.all())]

    def max_bytes(self, section: Any) -> int:
        return sum(len(f"<x:tag>{tag}</x:tag>") for tag in self.tags)

    def children(self, section: Any, item: Any, data: Any, site: SiteContext) -> str:
        return "".join(f"<x:tag>{tag}</x:tag>" for tag in self.tags)


class Tags(ModelSection):
    model = Article
    name = "tagged"


def tagged_signature() -> str:
    """The signature of a section with ``Tagged`` (a subprocess prints it)."""
    return fingerprints.signature(Tags(extensions=[Tagged(("a",))]), SITE)


@pytest.mark.parametrize(
    "change",
    [
        {"tags": ("a", "b")},
        {"tags": ["a"]},
        {"languages": {"fr", "de"}},
        {"codes": {"en": "en-US", "de": "de-DE"}},
        {"since": dt.date(2025, 1, 1)},
        {"tone": Tone.LOUD},
        {"transform": str.lower},
        {"policy": Opaque(2)},
        {"prefetch": [Prefetch("tags", queryset=Tag.objects.filter(name="x"))]},
    ],
    ids=lambda change: next(iter(change)),
)
def test_a_change_to_an_extension_setting_of_any_kind_changes_the_signature(change):
    def changed() -> Tagged:
        extension = Tagged(("a",))
        vars(extension).update(change)
        return extension

    before = fingerprints.signature(Tags(extensions=[Tagged(("a",))]), SITE)
    after = fingerprints.signature(Tags(extensions=[changed()]), SITE)
    assert after != before
    # And the same settings, in new objects, give the same signature.
    assert fingerprints.signature(Tags(extensions=[changed()]), SITE) == after


def test_the_signature_names_no_address_and_no_private_state():
    # No database access allowed here: a Prefetch's queryset is not run.
    extension = Tagged(("a",))
    signature = fingerprints.signature(Tags(extensions=[extension]), SITE)
    assert " at 0x" not in signature
    extension.policy._seen["a"] = 1  # a cache an object keeps for itself
    assert fingerprints.signature(Tags(extensions=[extension]), SITE) == signature


@pytest.mark.slow
def test_the_signature_is_the_same_in_another_process():
    """Sets and mappings sorted, functions and enums by name: another process
    (another hash seed) computes the same text."""
    root = Path(__file__).resolve().parents[2]
    code = (
        "import django; django.setup(); "
        "from tests.engine.test_layout import tagged_signature; print(tagged_signature())"
    )
    signatures = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": seed, "DJANGO_SETTINGS_MODULE": "tests.settings"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert signatures == {tagged_signature()}


@pytest.mark.django_db
def test_a_tuple_valued_extension_setting_changed_measures_the_section_again(registry, monkeypatch):
    """Measured blocks are kept under the signature: a tuple setting changed
    in place gives a new one, so the blocks are measured again and the
    layout holds the new entries' bytes (a 30,000-byte limit: three rows of
    worst-case entries would not fit a file, so they are measured)."""
    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 30_000)
    extension = Tagged(("a",))
    section = Tags(extensions=[extension])
    articles(3)
    assert section.file_sizing() == "measure"
    measured = measured_runs(monkeypatch)
    assert measuring.measure_blocks(section, SITE) == 1
    (before,) = section.index_pages(SITE)
    assert measuring.measure_blocks(section, SITE) == 0  # kept
    assert len(measured) == 1
    extension.tags = ("a", "bb")
    assert measuring.measure_blocks(section, SITE) == 1
    (after,) = section.index_pages(SITE)
    assert len(measured) == 2
    assert before.entry_bytes is not None and after.entry_bytes is not None
    assert after.entry_bytes - before.entry_bytes == 3 * len("<x:tag>bb</x:tag>")
