"""Google Video rules: ``video:video`` (SM821-SM830).

The writer (``extensions.video``) never writes a value outside these limits
(a required one leaves the video out, an optional one is left out of it) nor
a tag in ``DEPRECATED_TAGS``; the validator reports each of them.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

from django_sitemaps_plus.extensions.rules.values import (
    Counter,
    Findings,
    in_range,
    is_http_url,
    strip,
    w3c_span,
)
from django_sitemaps_plus.protocol import VIDEO_NS

#: No engine states a limit for video:video per url; this project holds them
#: to the images' bound, so one entry cannot fill a file.
MAX_VIDEOS_PER_URL: Final = 1_000
#: Google Video: title at most 100 characters, description at most 2,048,
#: duration 1 to 28,800 seconds (8 hours), rating 0.0 to 5.0, at most 32 tags,
#: the uploader's name at most 255 characters.
MAX_TITLE_LENGTH: Final = 100
MAX_DESCRIPTION_LENGTH: Final = 2_048
MIN_DURATION: Final = 1
MAX_DURATION: Final = 28_800
MIN_RATING: Final = 0.0
MAX_RATING: Final = 5.0
MAX_TAGS: Final = 32
MAX_UPLOADER_LENGTH: Final = 255
#: These children must be "yes" or "no".
YES_NO_TAGS: Final = frozenset({"family_friendly", "requires_subscription", "live"})
#: Platform values, space-separated, with relationship allow/deny.
PLATFORMS: Final = frozenset({"web", "mobile", "tv"})
#: Tags Google stopped using in 2022: harmless but pointless.
DEPRECATED_TAGS: Final = frozenset({"category", "gallery_loc", "price", "tvshow"})

VIDEO_TAG: Final = f"{{{VIDEO_NS}}}video"
_NS: Final = f"{{{VIDEO_NS}}}"
#: Reported once per file for the deprecated tags (first occurrence, count).
DEPRECATED_RULE: Final = "SM827"
_URL_TAGS: Final = ("thumbnail_loc", "content_loc", "player_loc")
_REQUIRED: Final = ("thumbnail_loc", "title", "description")


def duration_ok(seconds: int) -> bool:
    return MIN_DURATION <= seconds <= MAX_DURATION


def rating_ok(rating: Decimal | float) -> bool:
    return MIN_RATING <= rating <= MAX_RATING


def check_video(video: Any, loc: str, report: Findings, deprecated: Counter) -> None:
    """One ``video:video``: required children, each value's limits, deprecated tags."""
    add = report.add
    url = loc or None
    present: dict[str, str] = {}
    tags = 0
    for child in video:
        tag = child.tag
        if not isinstance(tag, str) or not tag.startswith(_NS):
            continue
        local = tag[len(_NS) :]
        line = child.sourceline
        value = (child.text or "").strip()
        if local in DEPRECATED_TAGS:
            deprecated.note(f"video:{local}", line)
        if local == "tag":
            tags += 1
            continue
        present.setdefault(local, value)
        if local in _URL_TAGS:
            if value and not is_http_url(value):
                add("SM828", f"video:{local} {value[:200]!r}", line=line, url=url)
            if value != (child.text or ""):
                strip(child.text, report, f"video:{local}", line)
        elif local == "title" and len(value) > MAX_TITLE_LENGTH:
            add("SM822", f"{len(value)} characters", line=line, url=url)
        elif local == "description" and len(value) > MAX_DESCRIPTION_LENGTH:
            add("SM823", f"{len(value):,} characters", line=line, url=url)
        elif local == "duration" and not in_range(value, MIN_DURATION, MAX_DURATION, integer=True):
            add("SM824", f"duration {value!r}", line=line, url=url)
        elif local == "rating" and not in_range(value, MIN_RATING, MAX_RATING):
            add("SM825", f"rating {value!r}", line=line, url=url)
        elif local in YES_NO_TAGS and value not in ("yes", "no"):
            add("SM829", f"video:{local} {value!r}", line=line, url=url)
        elif local in ("publication_date", "expiration_date") and w3c_span(value) is None:
            add("SM830", f"video:{local} {value!r}", line=line, url=url)
    if tags > MAX_TAGS:
        add("SM826", f"{tags} tags (limit {MAX_TAGS})", line=video.sourceline, url=url)
    missing = [f"video:{name}" for name in _REQUIRED if not present.get(name)]
    if not present.get("content_loc") and not present.get("player_loc"):
        missing.append("video:content_loc or video:player_loc")
    if missing:
        add("SM821", f"missing or empty: {', '.join(missing)}", line=video.sourceline, url=url)
