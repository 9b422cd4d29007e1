"""Image rules: ``image:image`` / ``image:loc`` (SM801-SM804).

The writer (``extensions.images``) lists at most ``MAX_IMAGES_PER_URL`` images
per ``<url>``, each an absolute http(s) URL within ``MAX_LOC_LENGTH``, and never
the tags in ``DEPRECATED_TAGS``; the validator reports the same things.
"""

from __future__ import annotations

from typing import Any, Final

from django_sitemaps_plus.extensions.rules.values import (
    Counter,
    Findings,
    all_clean_urls,
    is_http_url,
    strip,
)
from django_sitemaps_plus.protocol import IMAGE_NS

#: Google: at most 1,000 image:image per url.
MAX_IMAGES_PER_URL: Final = 1_000
#: Tags Google stopped using on 2022-08-06: harmless but pointless.
DEPRECATED_TAGS: Final = frozenset({"caption", "title", "geo_location", "license"})

IMAGE_TAG: Final = f"{{{IMAGE_NS}}}image"
LOC_TAG: Final = f"{{{IMAGE_NS}}}loc"
_PREFIX: Final = f"{{{IMAGE_NS}}}"
#: Reported once per file for the deprecated tags (first occurrence, count).
DEPRECATED_RULE: Final = "SM803"


def locs_ok(values: list[str]) -> bool:
    """Whether every ``image:loc``, as written, has nothing to report:
    an http(s) URL (SM804) and no surrounding whitespace (SM210). Clean URLs are tested
    all at once (one scan in C), others one by one."""
    return all_clean_urls(values) or all(
        value == value.strip() and is_http_url(value) for value in values
    )


def check_image(image: Any, loc: str, report: Findings, deprecated: Counter) -> None:
    """SM801 (no image:loc), SM804 (not an http(s) URL), deprecated tags counted."""
    image_loc = None
    for child in image:
        if child.tag == LOC_TAG:
            image_loc = child
            break
    text = image_loc.text if image_loc is not None else None
    if image_loc is None or text is None or not text.strip():
        report.add("SM801", "no image:loc", line=image.sourceline, url=loc or None)
    else:
        value = strip(text, report, "image:loc", image_loc)
        if not is_http_url(value):
            report.add(
                "SM804",
                f"image:loc {value[:200]!r}",
                line=image_loc.sourceline,
                url=loc or None,
            )
    if len(image) == 1:
        return
    for child in image:
        tag = child.tag
        if isinstance(tag, str) and tag.startswith(_PREFIX):
            local = tag.rpartition("}")[2]
            if local in DEPRECATED_TAGS:
                deprecated.note(f"image:{local}", child.sourceline)


def check_count(images: int, line: int | None, loc: str, report: Findings) -> None:
    """SM802: more images in one ``<url>`` than Google reads."""
    if images > MAX_IMAGES_PER_URL:
        report.add(
            "SM802",
            f"{images:,} images (limit {MAX_IMAGES_PER_URL:,})",
            line=line,
            url=loc,
        )
