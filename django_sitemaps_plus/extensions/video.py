"""Video: ``video:video`` for the pages that show a video (docs/video.md).

Values come from model fields or a method returning ``VideoInfo``; each is
checked against Google's limits before it is written (a video missing a
required value is left out, an optional value out of range is left out of
its video, each omission logged), so an invalid file is never written.
Elements Google deprecated in 2022 (``category``, ``gallery_loc``,
``price``, ``tvshow``) are never written.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from django.core.checks import CheckMessage
from django.db import models

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.engine.lastmod import format_w3c
from django_sitemaps_plus.extensions.base import (
    Extension,
    file_urls,
    item_rows,
    media_url,
    method_values,
    resolve_field,
    section_error,
    source_errors,
)
from django_sitemaps_plus.extensions.rules import video as rules

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")

Relationship = Literal["allow", "deny"]

#: Bytes one ``video:video`` may take unless told otherwise; a larger one is
#: left out (logged). 96 KiB is above any video whose values are within
#: Google's limits (about 70 KB with four 2,048-character locations and the
#: description all escaped at six bytes a character), so only runaway tags
#: reach it; files are sized from what is written, not from this.
DEFAULT_MAX_BYTES_PER_VIDEO = 98_304
_COUNTRIES_RE = re.compile(r"[A-Z]{2}(?: [A-Z]{2})*")
_PLATFORMS = rules.PLATFORMS


@dataclass(frozen=True)
class VideoInfo:
    """One video of a page, as Google's video sitemap describes it."""

    thumbnail_loc: Any
    title: str
    description: str
    content_loc: Any = None
    player_loc: Any = None
    duration: int | None = None
    expiration_date: dt.date | dt.datetime | None = None
    rating: float | Decimal | None = None
    view_count: int | None = None
    publication_date: dt.date | dt.datetime | None = None
    tags: Sequence[str] = ()
    family_friendly: bool | None = None
    #: Country codes (ISO 3166 alpha-2) where the video may (allow) or may not
    #: (deny) be played.
    restriction: Sequence[str] | None = None
    restriction_relationship: Relationship = "allow"
    requires_subscription: bool | None = None
    uploader: str | None = None
    uploader_info: Any = None
    #: Subset of "web", "mobile", "tv".
    platforms: Sequence[str] | None = None
    platform_relationship: Relationship = "allow"
    live: bool | None = None


_INFO_FIELDS = frozenset(f.name for f in fields(VideoInfo))
_REQUIRED = ("thumbnail_loc", "title", "description")


class Video(Extension):
    """``video:video`` children from field paths or a method.

    :param fields: ``VideoInfo`` attribute → model field path
        (``{"thumbnail_loc": "thumbnail", "title": "title", "description":
        "summary", "content_loc": "file", "duration": "seconds"}``); a path
        across a reverse relation gives one video per related row.
    :param method: the name of a method returning a ``VideoInfo``, an
        iterable of them, or None.
    :param prefetch: relations prefetched once per batch for ``method``.
    :param max_per_url: videos each entry is sized for; more are left out, logged.
    :param max_bytes_per_video: the most bytes one ``video:video`` may take;
        larger ones are left out, logged.
    """

    prefix: ClassVar[str] = "video"
    namespace: ClassVar[str] = protocol.VIDEO_NS

    def __init__(
        self,
        *,
        fields: Mapping[str, str] | None = None,
        method: str | None = None,
        prefetch: Sequence[str] = (),
        max_per_url: int = 1,
        max_bytes_per_video: int = DEFAULT_MAX_BYTES_PER_VIDEO,
    ) -> None:
        if (fields is None) == (method is None):
            raise TypeError("Video() takes fields={...} or method=..., not both.")
        self.fields = dict(fields or {})
        self.method = method
        self.prefetch = list(prefetch)
        self.max_per_url = max_per_url
        self.max_bytes_per_video = max_bytes_per_video

    def max_bytes(self, section: Section) -> int:
        return self.max_per_url * self.max_bytes_per_video

    # Data -------------------------------------------------------------------------

    def fetch(self, section: Section, items: Sequence[Any]) -> Sequence[Any]:
        if self.method is not None:
            return method_values(section, items, self.method, self.prefetch, _as_list)
        model: type[models.Model] = section.get_model()  # type: ignore[attr-defined]
        names = list(self.fields)
        converters = [file_urls(resolve_field(model, self.fields[name])) for name in names]
        return [
            [
                _info({name: to(value) for name, to, value in zip(names, converters, row)})
                for row in rows
                if not all(value in (None, "") for value in row)
            ]
            for rows in item_rows(section, items, list(self.fields.values()))
        ]

    # Output -----------------------------------------------------------------------

    def children(self, section: Section, item: Any, data: Any, site: SiteContext) -> str:
        out: list[str] = []
        log = _log(section, item)
        for video in data or ():
            if len(out) >= self.max_per_url:
                logger.warning(
                    "Sitemap section %r: %r has more than %s videos (Video(max_per_url=...)); "
                    "the rest are left out.",
                    section.get_name(),
                    item,
                    self.max_per_url,
                )
                break
            rendered = render_video(video, site, log)
            if rendered is None:
                continue
            if xml.byte_length(rendered) > self.max_bytes_per_video:
                log(
                    f"takes {xml.byte_length(rendered):,} bytes, over "
                    f"max_bytes_per_video={self.max_bytes_per_video:,}; video left out"
                )
                continue
            out.append(rendered)
        return "".join(out)

    # System checks ----------------------------------------------------------------

    def check(self, section: Section) -> list[CheckMessage]:
        errors: list[CheckMessage] = []
        model = getattr(section, "model", None)
        if not 1 <= self.max_per_url <= rules.MAX_VIDEOS_PER_URL:
            message = (
                f"Video(max_per_url={self.max_per_url!r}) must be 1 to "
                f"{rules.MAX_VIDEOS_PER_URL:,}."
            )
            errors.append(section_error(section, message, "sitemaps_plus.E133"))
        ids = ("sitemaps_plus.E135", "sitemaps_plus.E136")
        errors += source_errors(section, "Video", self.method, "fields=...", ids)
        if self.method is not None or model is None:
            return errors
        unknown = sorted(set(self.fields) - _INFO_FIELDS)
        if unknown:
            message = f"Video(fields=...) names {unknown}, which are not VideoInfo attributes."
            hint = "Known: " + ", ".join(sorted(_INFO_FIELDS)) + "."
            errors.append(section_error(section, message, "sitemaps_plus.E131", hint))
        missing = [name for name in _REQUIRED if name not in self.fields]
        if not ({"content_loc", "player_loc"} & set(self.fields)):
            missing.append("content_loc or player_loc")
        if missing:
            message = f"Video(fields=...) lacks {', '.join(missing)}, which Google requires."
            errors.append(section_error(section, message, "sitemaps_plus.E132"))
        limits = {"title": rules.MAX_TITLE_LENGTH, "description": rules.MAX_DESCRIPTION_LENGTH}
        for name, path in self.fields.items():
            try:
                field = resolve_field(model, path)
            except LookupError as exc:
                errors.append(section_error(section, f"Video field {exc}.", "sitemaps_plus.E134"))
                continue
            limit = limits.get(name)
            max_length = getattr(field, "max_length", None)
            if limit is not None and (max_length is None or max_length > limit):
                errors.append(
                    section_error(
                        section,
                        f"video {name} comes from {path!r}, which allows "
                        f"{'any length' if max_length is None else f'{max_length:,} characters'};"
                        f" Google allows {limit:,}, so longer values leave their video out "
                        "of the sitemap (logged).",
                        "sitemaps_plus.W131",
                        f"Limit the field to max_length={limit} or map a shorter field.",
                        warning=True,
                    )
                )
        return errors


def _log(section: Section, item: Any) -> Callable[[str], None]:
    """Logs why a video of ``item`` or one of its values is left out."""
    return lambda why: logger.warning(
        "Sitemap section %r: a video of %r %s.", section.get_name(), item, why
    )


def _info(values: Mapping[str, Any]) -> VideoInfo:
    known = {k: v for k, v in values.items() if k in _INFO_FIELDS}
    if isinstance(known.get("tags"), str):
        known["tags"] = [t.strip() for t in known["tags"].split(",") if t.strip()]
    for name in _REQUIRED:
        known.setdefault(name, "")
    return VideoInfo(**known)


def _as_list(value: VideoInfo | Iterable[VideoInfo] | None) -> list[VideoInfo]:
    if value is None:
        return []
    if isinstance(value, VideoInfo):
        return [value]
    return list(value)


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def _date(value: Any, name: str, log: Any) -> str | None:
    """A date or datetime as W3C Datetime; anything else is left out, logged."""
    if value is None:
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return format_w3c(value)
    log(f"has a {name} {value!r} that is not a date or datetime; {name} left out")
    return None


def render_video(video: VideoInfo, site: SiteContext, log: Any) -> str | None:
    """One ``video:video`` element, or None (logged) when a required value is invalid.

    Values outside Google's limits are never written: a required one leaves
    the video out, an optional one is left out of it.
    """

    def located(name: str, value: Any, then: str) -> str | None:
        """An optional address: None when not given, or (logged) when unusable."""
        url, why = media_url(value, site, protocol.MAX_LOC_LENGTH) if value else (None, None)
        if why is not None:
            log(f"has {name} that {why}; {then}")
        return url

    thumbnail, why = media_url(video.thumbnail_loc, site, protocol.MAX_LOC_LENGTH)
    if thumbnail is None:
        log(f"has a thumbnail_loc that {why}; video left out")
        return None
    title = (video.title or "").strip()
    description = (video.description or "").strip()
    if not title or len(title) > rules.MAX_TITLE_LENGTH:
        log(
            f"has a title of {len(title)} characters "
            f"(1 to {rules.MAX_TITLE_LENGTH:,} allowed); video left out"
        )
        return None
    if not description or len(description) > rules.MAX_DESCRIPTION_LENGTH:
        log(
            f"has a description of {len(description):,} characters "
            f"(1 to {rules.MAX_DESCRIPTION_LENGTH:,} allowed); video left out"
        )
        return None
    content = located("a content_loc", video.content_loc, "left out")
    player = located("a player_loc", video.player_loc, "left out")
    if content is None and player is None:
        log("has neither a usable content_loc nor player_loc; video left out")
        return None
    parts = ["<video:video>"]

    def add(name: str, text: object) -> None:
        parts.append(f"<video:{name}>{text}</video:{name}>")

    add("thumbnail_loc", xml.escape(thumbnail))
    add("title", xml.escape(title))
    add("description", xml.escape(description))
    if content:
        add("content_loc", xml.escape(content))
    if player:
        add("player_loc", xml.escape(player))
    if video.duration is not None:
        duration = int(video.duration)
        if rules.duration_ok(duration):
            add("duration", duration)
        else:
            log(
                f"has a duration of {duration} s ({rules.MIN_DURATION} to "
                f"{rules.MAX_DURATION:,} allowed); duration left out"
            )
    expiration = _date(video.expiration_date, "expiration_date", log)
    if expiration:
        add("expiration_date", expiration)
    if video.rating is not None:
        rating = Decimal(str(video.rating))
        if rules.rating_ok(rating):
            add("rating", rating)
        else:
            log(
                f"has a rating of {rating} ({rules.MIN_RATING} to "
                f"{rules.MAX_RATING} allowed); rating left out"
            )
    if video.view_count is not None:
        view_count = int(video.view_count)
        if view_count >= 0:
            add("view_count", view_count)
        else:
            log(f"has a view_count of {view_count} (0 or more allowed); view_count left out")
    published = _date(video.publication_date, "publication_date", log)
    if published:
        add("publication_date", published)
    tags = [t.strip() for t in video.tags if t and t.strip()]
    if len(tags) > rules.MAX_TAGS:
        log(
            f"has {len(tags)} tags ({rules.MAX_TAGS} allowed); the first "
            f"{rules.MAX_TAGS} are listed"
        )
        tags = tags[: rules.MAX_TAGS]
    for tag in tags:
        add("tag", xml.escape(tag))
    if video.family_friendly is not None:
        add("family_friendly", _yes_no(video.family_friendly))
    if video.restriction is not None:
        countries = " ".join(c.strip().upper() for c in video.restriction if c.strip())
        if _COUNTRIES_RE.fullmatch(countries) and video.restriction_relationship in (
            "allow",
            "deny",
        ):
            parts.append(
                f'<video:restriction relationship="{video.restriction_relationship}">'
                f"{countries}</video:restriction>"
            )
        else:
            log(f"has a restriction {countries!r} that is not ISO 3166 codes; left out")
    if video.requires_subscription is not None:
        add("requires_subscription", _yes_no(video.requires_subscription))
    if video.uploader:
        uploader = video.uploader.strip()
        if len(uploader) > rules.MAX_UPLOADER_LENGTH:
            log(
                f"has an uploader of {len(uploader)} characters "
                f"({rules.MAX_UPLOADER_LENGTH} allowed); left out"
            )
        else:
            then = "the uploader is listed without it"
            info = located("an uploader_info", video.uploader_info, then)
            attribute = f' info="{xml.escape(info)}"' if info else ""
            parts.append(f"<video:uploader{attribute}>{xml.escape(uploader)}</video:uploader>")
    if video.platforms is not None:
        platforms = [p.strip().lower() for p in video.platforms if p.strip()]
        if (
            platforms
            and all(p in _PLATFORMS for p in platforms)
            and (video.platform_relationship in ("allow", "deny"))
        ):
            parts.append(
                f'<video:platform relationship="{video.platform_relationship}">'
                f"{' '.join(platforms)}</video:platform>"
            )
        else:
            log(f"has platforms {platforms!r} (web, mobile, tv allowed); left out")
    if video.live is not None:
        add("live", _yes_no(video.live))
    parts.append("</video:video>")
    return "".join(parts)
