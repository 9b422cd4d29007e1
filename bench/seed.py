"""Fast deterministic seeding of the benchmark tables.

``rows`` articles with ids 1..rows (all published, so every sitemap file of
the benchmark holds ``BENCH_LIMIT`` URLs) and ``rows // 3`` comments on
random articles. ``updated_at`` and ``created_at`` are spread over three
years with microseconds, like ``auto_now`` values. PostgreSQL is loaded with
``COPY``; SQLite with ``executemany`` in one transaction.
"""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Iterator

from django.db import connection, transaction

from bench.benchapp.models import Article, Comment

SEED = 20_26
START = dt.datetime(2023, 1, 1, tzinfo=dt.timezone.utc)
SPAN_SECONDS = 3 * 365 * 24 * 3600
BLOCK = 100_000


def comment_count(rows: int) -> int:
    return rows // 3


def _stamp(rng: random.Random) -> str:
    # Text both SQLite (as stored by Django) and PostgreSQL's COPY accept.
    value = START + dt.timedelta(
        seconds=rng.randrange(SPAN_SECONDS), microseconds=rng.randrange(1_000_000)
    )
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")


def _articles(rows: int, rng: random.Random) -> Iterator[tuple[int, str, str, bool]]:
    for pk in range(1, rows + 1):
        yield pk, f"article-{pk}", _stamp(rng), True


def _comments(rows: int, rng: random.Random) -> Iterator[tuple[int, int, str]]:
    for pk in range(1, comment_count(rows) + 1):
        yield pk, rng.randrange(1, rows + 1), _stamp(rng)


def is_seeded(rows: int) -> bool:
    return (
        Article.objects.count() == rows
        and Comment.objects.count() == comment_count(rows)
        and Article.objects.filter(pk=rows).exists()
    )


def seed(rows: int) -> dict[str, float]:
    """Empty the tables and load ``rows`` articles; seconds per step."""
    rng = random.Random(SEED)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    if connection.vendor == "postgresql":
        _seed_postgresql(rows, rng)
    else:
        _seed_executemany(rows, rng)
    timings["load"] = time.perf_counter() - started
    started = time.perf_counter()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("VACUUM ANALYZE benchapp_article")
            cursor.execute("VACUUM ANALYZE benchapp_comment")
        else:
            cursor.execute("ANALYZE")
    timings["analyze"] = time.perf_counter() - started
    return timings


def _seed_executemany(rows: int, rng: random.Random) -> None:
    article = Article._meta.db_table
    comment = Comment._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA synchronous = OFF")
        with transaction.atomic():
            cursor.execute(f"DELETE FROM {comment}")
            cursor.execute(f"DELETE FROM {article}")
            for batch in _blocks(_articles(rows, rng)):
                cursor.executemany(
                    f"INSERT INTO {article} (id, slug, updated_at, is_published) "
                    "VALUES (%s, %s, %s, %s)",
                    batch,
                )
            for batch in _blocks(_comments(rows, rng)):
                cursor.executemany(
                    f"INSERT INTO {comment} (id, article_id, created_at) VALUES (%s, %s, %s)",
                    batch,
                )
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA synchronous = FULL")


def _blocks(rows: Iterator[tuple[object, ...]]) -> Iterator[list[tuple[object, ...]]]:
    block: list[tuple[object, ...]] = []
    for row in rows:
        block.append(row)
        if len(block) >= BLOCK:
            yield block
            block = []
    if block:
        yield block


def _seed_postgresql(rows: int, rng: random.Random) -> None:
    article = Article._meta.db_table
    comment = Comment._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {comment}, {article} RESTART IDENTITY")
        raw = cursor.cursor
        with raw.copy(f"COPY {article} (id, slug, updated_at, is_published) FROM STDIN") as copy:
            for block in _blocks(_articles(rows, rng)):
                copy.write("".join(f"{a}\t{b}\t{c}+00\tt\n" for a, b, c, _ in block))
        with raw.copy(f"COPY {comment} (id, article_id, created_at) FROM STDIN") as copy:
            for block in _blocks(_comments(rows, rng)):
                copy.write("".join(f"{a}\t{b}\t{c}+00\n" for a, b, c in block))
        for table in (article, comment):
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT COALESCE(MAX(id), 1) FROM {table}))"
            )
