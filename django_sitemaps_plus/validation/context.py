"""What a check needs to know beyond the bytes."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass
class Context:
    """What a check needs to know beyond the bytes."""

    #: The URL the file is published at (for the host and directory rules).
    file_url: str | None = None
    now: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
    #: Collect the index's children (loc, line) for following.
    children: list[tuple[str, int]] = field(default_factory=list)
