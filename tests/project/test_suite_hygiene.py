"""The test suite closes a streamed body a test never read, as a server would.

``tests/conftest.py`` records every body ``streaming_response`` makes and
closes them before each test's rollback: an unread file's server-side cursor
(PostgreSQL) would otherwise be closed by the garbage collector during a
later test, in that test's transaction, and abort it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import Client

from django_sitemaps_plus import register
from tests import conftest
from tests.testapp.models import Article
from tests.utils import articles, at


@pytest.mark.django_db
def test_an_unread_body_is_closed_in_its_own_transaction(registry, settings):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
    register(Article, lastmod_fields=["updated_at"])
    articles(3000, updated_at=at(1))
    conftest.close_unread_bodies()

    response = Client().get("/sitemap-articles-1.xml")
    assert response.status_code == 200 and response.streaming
    (body,) = conftest._unread_bodies
    next(body)  # started, as a server starts it: on PostgreSQL its cursor is open

    conftest.close_unread_bodies()

    assert conftest._unread_bodies == []
    assert body.gi_frame is None  # the generator ran its cleanup
    # The cursor was closed in the transaction it lived in: the test's
    # transaction is intact and answers.
    assert Article.objects.count() == 3000
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


@pytest.mark.django_db
# Django's own row iterator, dropped inside the aborted transaction, reports
# its failed CLOSE as an unraisable exception: that is the point shown here.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_why_a_body_closed_after_its_savepoint_is_gone_aborts_the_transaction(registry, settings):
    """What the conftest prevents, on PostgreSQL: the body's server-side
    cursor dies with the savepoint it was declared in (a test's), and its
    ``CLOSE`` afterwards aborts the transaction it runs in (a later test's),
    silently; the next query fails."""
    if connection.vendor != "postgresql":
        pytest.skip("server-side cursors are PostgreSQL's")
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
    register(Article, lastmod_fields=["updated_at"])
    articles(3000, updated_at=at(1))
    conftest.close_unread_bodies()

    with pytest.raises(DatabaseError), transaction.atomic():  # keeps this test's transaction
        earlier_test = transaction.savepoint()
        Client().get("/sitemap-articles-1.xml")
        body = conftest._unread_bodies.pop()
        next(body)
        transaction.savepoint_rollback(earlier_test)
        body.close()  # as the garbage collector would, during a later test
        Article.objects.count()
    assert Article.objects.count() == 3000


def test_a_body_whose_cleanup_fails_neither_keeps_others_open_nor_skips_the_rollback():
    def good() -> Iterator[bytes]:
        yield b"<urlset>"

    class Failing:
        def __iter__(self) -> Failing:
            return self

        def __next__(self) -> bytes:
            raise StopIteration

        def close(self) -> None:
            raise RuntimeError("the cursor's CLOSE failed")

    body = good()
    next(body)
    conftest._unread_bodies.extend([body, Failing()])
    rolled_back: list[object] = []
    teardown = conftest._closing_bodies_first(rolled_back.append)

    with pytest.raises(RuntimeError, match="CLOSE failed"):
        teardown("the test case")

    assert body.gi_frame is None
    assert conftest._unread_bodies == []
    assert rolled_back == ["the test case"]
