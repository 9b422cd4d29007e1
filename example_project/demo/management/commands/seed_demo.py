"""Fill the example site with realistic demo data, fast.

    python manage.py seed_demo                       # ~5,000 articles, 2,000 products
    python manage.py seed_demo --articles 1000000 --flush

Rows are made in Python from a seeded random generator and written with
``bulk_create`` in batches, one transaction per batch, so a million articles
take minutes on SQLite rather than hours. Dates are spread over several years
(timezone-aware), some articles are drafts and some products inactive (both
must stay out of the sitemap), and some slugs are not ASCII ("über-uns",
"café-crème") so that IRI-to-URI encoding is exercised. The products' images
are a handful of small PNGs the command draws and saves to the default
storage (``MEDIA_ROOT``), which the example serves, so every image URL the
sitemap lists answers.

The command refuses to add a second copy of the data: when articles or
products already exist it says so and does nothing, unless ``--flush`` is
given, which empties the demo tables first.
"""

from __future__ import annotations

import argparse
import functools
import random
import struct
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from decimal import Decimal
from typing import Any

from blog.models import Article, Comment, Tag
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandParser
from django.core.management.color import no_style
from django.db import connection, models, reset_queries, transaction
from django.utils import timezone
from django.utils.text import slugify
from shop.models import Category, Product, ProductImage

ADJECTIVES = [
    "quick", "quiet", "honest", "bright", "hidden", "practical", "modern", "simple",
    "curious", "gentle", "bold", "patient", "careful", "tiny", "vast", "clever",
    "rusty", "fresh", "golden", "lazy", "northern", "silent", "urban", "wild",
]  # fmt: skip
NOUNS = [
    "guide", "notes", "recipe", "journey", "review", "garden", "workshop", "kitchen",
    "harbour", "library", "market", "river", "engine", "lesson", "pattern", "season",
    "village", "bridge", "compass", "lantern", "orchard", "studio", "theory", "voyage",
]  # fmt: skip
TOPICS = [
    "Django", "Python", "sitemaps", "databases", "caching", "search engines", "coffee",
    "bread", "cycling", "gardening", "typography", "hiking", "photography", "jazz",
]  # fmt: skip
# Titles whose slugs keep non-ASCII letters (slugify(..., allow_unicode=True)).
UNICODE_TITLES = [
    "Über uns", "Café crème", "Crème brûlée", "Straße und Brücke", "Smørrebrød",
    "Déjà vu", "Jalapeño salsa", "Zürich bei Nacht", "Kraków", "Ça marche",
    "Façade", "Ελληνική κουζίνα", "東京 guide",
]  # fmt: skip
SENTENCES = [
    "A sitemap should say when a page last changed in a way a reader would notice.",
    "Search engines crawl what they are told has changed, so honesty pays off.",
    "The first draft was written on a train and rewritten twice since.",
    "Good defaults matter more than clever options.",
    "Every measurement here was repeated three times on the same machine.",
    "The results surprised us, and the reasons were mundane.",
    "Readers asked for more detail, so this section grew.",
    "Small steps, each tested, beat one large leap.",
    "The recipe needs patience more than skill.",
    "We kept the old numbers for comparison.",
    "Nothing here needs more than the standard library.",
    "Some of this will be out of date by next year, and that is fine.",
]
COMMENTS = [
    "Thanks, this helped a lot.",
    "Could you expand on the second part?",
    "I tried this and it worked on the first attempt.",
    "Danke für den Artikel!",
    "Merci, très clair.",
    "The numbers look different on my machine.",
    "Bookmarked for later.",
    "Is there a follow-up planned?",
]
TAGS = [
    "Django", "Python", "SEO", "Performance", "Databases", "Caching", "Tutorial",
    "Opinion", "Käse", "Crème", "Reisen", "Cuisine", "Open source", "Release",
]  # fmt: skip
CATEGORIES = [
    "Coffee", "Tea", "Kitchen", "Books", "Bicycles", "Garden", "Stationery",
    "Outdoor", "Pâtisserie", "Spielzeug", "Électronique", "Music",
]  # fmt: skip
PRODUCT_NOUNS = [
    "mug", "grinder", "kettle", "notebook", "lamp", "saddle", "trowel", "tent",
    "whisk", "pen", "speaker", "backpack", "teapot", "bell", "apron", "crate",
]  # fmt: skip
MATERIALS = ["oak", "steel", "copper", "linen", "ceramic", "bamboo", "glass", "wool"]

# Share of articles that are drafts and of products that are inactive: rows
# that exist but must never appear in the sitemap.
#: Articles published in the last two days (the news file's content).
RECENT_ARTICLES = 6
#: The demo's admin login; printed by ./example_project/run. Demo only.
DEMO_USER = "demo"
DEMO_PASSWORD = "demo-only-not-secret"
DRAFT_SHARE = 0.06
INACTIVE_SHARE = 0.08
#: The product images: as many as a product's sitemap entry lists at most
#: (``Images(max_per_url=10)`` in shop/sitemaps.py), so no entry names one twice.
DEMO_IMAGES = 10
DEMO_IMAGE_SIZE = 96
#: One colour per image (RGB), a lighter band across each.
DEMO_IMAGE_COLOURS = [
    (65, 118, 144), (200, 90, 60), (90, 150, 80), (160, 110, 170), (220, 170, 50),
    (70, 70, 80), (40, 150, 160), (190, 60, 110), (120, 100, 70), (100, 130, 200),
]  # fmt: skip


def demo_image_name(number: int) -> str:
    """The storage name of demo image ``number`` (1 to ``DEMO_IMAGES``)."""
    return f"products/demo-{number}.png"


def demo_png(number: int) -> bytes:
    """Demo image ``number``: a small square PNG, one colour with a diagonal band."""
    red, green, blue = DEMO_IMAGE_COLOURS[(number - 1) % len(DEMO_IMAGE_COLOURS)]
    light = bytes((min(255, red + 80), min(255, green + 80), min(255, blue + 80)))
    dark = bytes((red, green, blue))
    size = DEMO_IMAGE_SIZE
    rows = b"".join(
        # Each row: filter type 0, then its pixels.
        b"\x00" + b"".join(light if abs(x - y) < size // 6 else dark for x in range(size))
        for y in range(size)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {number}")
    return number


def positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {number}")
    return number


@contextmanager
def explicit_dates(*fields: models.Field[Any, Any]) -> Iterator[None]:
    """Write the dates set on each instance, for the duration.

    bulk_create() calls each field's pre_save(), and both ``auto_now`` and
    ``ContentChangedField`` stamp the current time there; demo rows need dates
    spread over years. For the duration, each field uses the plain
    Field.pre_save(), which returns the instance's own value.
    """
    for field in fields:
        field.pre_save = functools.partial(models.Field.pre_save, field)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for field in fields:
            del field.pre_save  # back to the class's own method


class Command(BaseCommand):
    help = "Fill the example site with demo articles, comments, tags and products."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--articles", type=non_negative_int, default=5000, help="Articles (default 5,000)."
        )
        parser.add_argument(
            "--products", type=non_negative_int, default=2000, help="Products (default 2,000)."
        )
        parser.add_argument(
            "--comments-per-article",
            type=non_negative_int,
            default=3,
            help="Average comments per published article, from 0 to twice this (default 3).",
        )
        parser.add_argument(
            "--images-per-product",
            type=non_negative_int,
            default=2,
            help="Average images per product, from 0 to twice this (default 2).",
        )
        parser.add_argument(
            "--years",
            type=positive_int,
            default=5,
            help="Spread publication dates over this many years before now (default 5).",
        )
        parser.add_argument(
            "--batch-size",
            type=positive_int,
            default=5000,
            help="Articles or products written per transaction (default 5,000).",
        )
        parser.add_argument(
            "--seed", type=int, default=2024, help="Random seed, for repeatable data."
        )
        parser.add_argument("--flush", action="store_true", help="Delete existing demo data first.")

    def handle(self, *args: Any, **options: Any) -> None:
        self.verbosity: int = options["verbosity"]
        self.rng = random.Random(options["seed"])
        self.now = timezone.now()
        self.span = timedelta(days=365 * options["years"]).total_seconds()
        batch_size: int = options["batch_size"]

        self.demo_superuser()
        if options["flush"]:
            self.flush()
        else:
            articles, products = Article.objects.count(), Product.objects.count()
            if articles or products:
                # Seeding again would double the data (with new slugs), which
                # is never what a demo wants; --flush makes it explicit.
                self.stdout.write(
                    f"Demo data already present ({articles:,} articles, {products:,} "
                    "products); nothing seeded. Use --flush to replace it."
                )
                return

        started = time.perf_counter()
        with self.fast_sqlite():
            rows = self.seed_blog(options["articles"], options["comments_per_article"], batch_size)
            rows += self.seed_shop(options["products"], options["images_per_product"], batch_size)
        elapsed = time.perf_counter() - started
        rate = rows / elapsed if elapsed else 0.0
        self.stdout.write(
            self.style.SUCCESS(
                f"Seeded {options['articles']:,} articles and {options['products']:,} products "
                f"({rows:,} rows in all) in {elapsed:.1f} s, {rate:,.0f} rows/s."
            )
        )

    # -- helpers ----------------------------------------------------------------

    def demo_superuser(self) -> None:
        """A superuser for the demo's admin, with a published password: a demo only."""
        from django.contrib.auth import get_user_model

        users = get_user_model()
        if not users.objects.filter(username=DEMO_USER).exists():
            users.objects.create_superuser(DEMO_USER, "demo@example.com", DEMO_PASSWORD)
            self.stdout.write(
                f"Created the demo superuser {DEMO_USER!r} (password {DEMO_PASSWORD!r}); "
                "demo data only, never on a real site."
            )

    def flush(self) -> None:
        """Empty every demo table in one statement per table, resetting ids.

        QuerySet.delete() would load a million rows to run cascades in Python;
        the backend's own flush SQL (TRUNCATE, or DELETE on SQLite) does not.
        """
        tables = [
            model._meta.db_table
            for model in (
                Article.tags.through,
                Comment,
                Article,
                Tag,
                ProductImage,
                Product,
                Category,
            )
        ]
        statements = connection.ops.sql_flush(
            no_style(), tables, reset_sequences=True, allow_cascade=False
        )
        connection.ops.execute_sql_flush(statements)
        if self.verbosity >= 1:
            self.stdout.write("Flushed the demo tables.")

    @contextmanager
    def fast_sqlite(self) -> Iterator[None]:
        """On SQLite, skip the fsync after each batch while seeding.

        Demo data can be seeded again if the machine crashes mid-way; the
        speed-up on a million rows is large. Other databases are untouched.
        """
        if connection.vendor != "sqlite":
            yield
            return
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous")
            previous = cursor.fetchone()[0]
            cursor.execute("PRAGMA synchronous = OFF")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute(f"PRAGMA synchronous = {int(previous)}")

    def random_past(self, after: datetime | None = None) -> datetime:
        """A time between ``after`` (or ``--years`` ago) and now, in UTC."""
        now_ts = self.now.timestamp()
        start = after.timestamp() if after is not None else now_ts - self.span
        return datetime.fromtimestamp(
            start + (now_ts - start) * self.rng.random(), tz=dt_timezone.utc
        )

    def progress(self, label: str, done: int, total: int) -> None:
        # With DEBUG on, Django keeps the last 9,000 statements; bulk inserts
        # are large, so that log alone would grow to gigabytes.
        reset_queries()
        if self.verbosity >= 2:
            self.stdout.write(f"  {label}: {done:,} / {total:,}")

    def body(self) -> str:
        rng = self.rng
        return "\n\n".join(
            " ".join(rng.sample(SENTENCES, rng.randint(2, 3))) for _ in range(rng.randint(1, 3))
        )

    # -- blog -------------------------------------------------------------------

    def seed_blog(self, count: int, comments_per_article: int, batch_size: int) -> int:
        if count == 0:
            return 0
        rng = self.rng
        tags = Tag.objects.bulk_create(
            [Tag(name=name, slug=slugify(name, allow_unicode=True)) for name in TAGS]
        )
        tag_ids = [tag.pk for tag in tags]
        through = Article.tags.through
        rows = len(tags)

        for start in range(0, count, batch_size):
            articles: list[Article] = []
            for number in range(start + 1, min(start + batch_size, count) + 1):
                articles.append(self.make_article(number))
            comments: list[Comment] = []
            links: list[Any] = []
            with (
                explicit_dates(
                    Article._meta.get_field("updated_at"),
                    Article._meta.get_field("content_changed_at"),
                ),
                transaction.atomic(),
            ):
                # PostgreSQL, SQLite >= 3.35 and MariaDB >= 10.5 return the new
                # ids, which the comments and tag links below point at.
                Article.objects.bulk_create(articles)
                for article in articles:
                    for tag_id in rng.sample(tag_ids, rng.randint(0, 3)):
                        links.append(through(article_id=article.pk, tag_id=tag_id))
                    if article.published_at is None or not comments_per_article:
                        continue
                    for _ in range(rng.randint(0, 2 * comments_per_article)):
                        comments.append(
                            Comment(
                                article_id=article.pk,
                                body=rng.choice(COMMENTS),
                                created_at=self.random_past(article.published_at),
                            )
                        )
                Comment.objects.bulk_create(comments)
                through.objects.bulk_create(links)
            rows += len(articles) + len(comments) + len(links)
            self.progress("articles", start + len(articles), count)
        return rows

    def make_article(self, number: int) -> Article:
        rng = self.rng
        if number == 1:
            title = "Über uns"
        elif number % 15 == 0:
            title = f"{rng.choice(UNICODE_TITLES)}: {rng.choice(NOUNS)}"
        else:
            title = (
                f"The {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} of {rng.choice(TOPICS)}"
            ).capitalize()
        slug = slugify(title, allow_unicode=True)
        # A running number makes every slug unique without a lookup; the first
        # article keeps its bare slug ("über-uns") as a stable demo URL.
        if number != 1:
            slug = f"{slug}-{number}"
        published: datetime | None
        if rng.random() < DRAFT_SHARE and number != 1:
            published = None
            changed = updated = self.random_past()  # a draft: created, never changed
        elif number <= 1 + RECENT_ARTICLES:
            # Published in the last two days: the Google News file is never empty.
            published = self.now - timedelta(hours=self.rng.uniform(1, 40))
            changed = updated = published
        else:
            published = self.random_past()
            # About a third of articles were edited after publication.
            changed = self.random_past(published) if rng.random() < 0.3 else published
            # Half were saved later without a content change (a flag, a counter):
            # updated_at moves, content_changed_at does not.
            updated = self.random_past(changed) if rng.random() < 0.5 else changed
        return Article(
            title=title,
            slug=slug,
            body=self.body(),
            is_published=published is not None,
            published_at=published,
            content_changed_at=changed,
            updated_at=updated,
        )

    # -- shop -------------------------------------------------------------------

    def demo_images(self) -> None:
        """Save the demo images to the default storage, where missing."""
        for number in range(1, DEMO_IMAGES + 1):
            name = demo_image_name(number)
            if not default_storage.exists(name):
                saved = default_storage.save(name, ContentFile(demo_png(number)))
                assert saved == name, f"the storage saved {name} as {saved}"

    def seed_shop(self, count: int, images_per_product: int, batch_size: int) -> int:
        if count == 0:
            return 0
        if images_per_product:
            self.demo_images()
        rng = self.rng
        categories = Category.objects.bulk_create(
            [Category(name=name, slug=slugify(name, allow_unicode=True)) for name in CATEGORIES]
        )
        rows = len(categories)
        for start in range(0, count, batch_size):
            products: list[Product] = []
            for number in range(start + 1, min(start + batch_size, count) + 1):
                if number == 1:
                    name, slug = "Café crème", "café-crème"
                else:
                    if number % 12 == 0:
                        name = f"{rng.choice(UNICODE_TITLES)} {rng.choice(PRODUCT_NOUNS)}"
                    else:
                        name = f"{rng.choice(MATERIALS)} {rng.choice(PRODUCT_NOUNS)}".capitalize()
                    slug = f"{slugify(name, allow_unicode=True)}-{number}"
                products.append(
                    Product(
                        name=name,
                        slug=slug,
                        price=Decimal(rng.randint(199, 49999)) / 100,
                        category=rng.choice(categories),
                        modified=self.random_past(),
                        is_active=number == 1 or rng.random() >= INACTIVE_SHARE,
                    )
                )
            images: list[ProductImage] = []
            with explicit_dates(Product._meta.get_field("modified")), transaction.atomic():
                Product.objects.bulk_create(products)
                for position, product in enumerate(products, start=start):
                    for index in range(rng.randint(0, 2 * images_per_product)):
                        # Consecutive products start at different images.
                        number = (position + index) % DEMO_IMAGES + 1
                        images.append(
                            ProductImage(
                                product_id=product.pk,
                                image=demo_image_name(number),
                                uploaded_at=self.random_past(product.modified),
                            )
                        )
                ProductImage.objects.bulk_create(images)
            rows += len(products) + len(images)
            self.progress("products", start + len(products), count)
        return rows
