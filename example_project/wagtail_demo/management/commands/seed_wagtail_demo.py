"""``manage.py seed_wagtail_demo``: an English and French Wagtail tree.

Seeds only a database without demo pages. The tree shows every rule of the
integration: translated pages (hreflang alternates), untranslated ones, a
private section (a password view restriction) with a child, a draft, a page
an editor took out of the sitemap, and articles with images. Publication
times are spread over the past weeks, as a site's history would have them
(every page published in the same second would look like a generated lastmod).
"""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

from django.core.files.images import ImageFile
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

ARTICLES = [
    ("Keyset pagination", "La pagination par clés"),
    ("Honest lastmod", "Un lastmod honnête"),
    ("Hreflang alternates", "Les alternatives hreflang"),
    ("Images in sitemaps", None),
    ("Caching sitemap files", None),
]


class Command(BaseCommand):
    help = "Seed the Wagtail demo's pages (only when there are none)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="the Site's hostname")
        parser.add_argument("--port", type=int, default=8000, help="the Site's port")

    def handle(self, *args: Any, **options: Any) -> None:
        from wagtail_demo.models import HomePage

        if HomePage.objects.exists():
            self.stdout.write("Demo pages exist; nothing seeded.")
            return
        with transaction.atomic():
            self._seed(options["host"], options["port"])
        self.stdout.write("Seeded the Wagtail demo: English and French pages.")

    def _seed(self, host: str, port: int) -> None:
        from wagtail.models import Locale, Page, PageViewRestriction, Site

        from wagtail_demo.models import ArticlePage, HomePage

        Site.objects.all().delete()
        for page in Page.get_first_root_node().get_children():
            page.delete()
        root = Page.get_first_root_node()
        en = Locale.objects.get_or_create(language_code="en")[0]
        fr = Locale.objects.get_or_create(language_code="fr")[0]

        home = _publish(root, HomePage(title="Welcome", slug="home", locale=en, intro="A demo."))
        Site.objects.create(hostname=host, port=port, root_page=home, is_default_site=True)
        _translate(home, fr, title="Bienvenue")

        about = _publish(home, ArticlePage(title="About us", slug="about"))
        _translate(about, fr, title="À propos", slug="a-propos")
        blog = _publish(home, ArticlePage(title="Blog", slug="blog"))
        _translate(blog, fr, title="Blog", slug="blog")
        for number, (title, french) in enumerate(ARTICLES):
            image = _image(f"article-{number}", (40 * number % 255, 120, 200))
            article = _publish(
                blog,
                ArticlePage(
                    title=title,
                    slug=f"article-{number}",
                    hero_image=image,
                    body=[("paragraph", f"{title}, explained."), ("image", image)],
                ),
            )
            if french:
                _translate(article, fr, title=french, slug=f"article-{number}")

        members = _publish(home, ArticlePage(title="Members only", slug="members"))
        _publish(members, ArticlePage(title="Members' news", slug="news"))
        PageViewRestriction.objects.create(
            page=members, restriction_type=PageViewRestriction.PASSWORD, password="demo"
        )
        draft = ArticlePage(title="Coming soon", slug="coming-soon", live=False)
        home.add_child(instance=draft)
        draft.save_revision()
        _publish(home, ArticlePage(title="Thank you", slug="thanks", show_in_sitemap=False))
        _spread_history(Page)


def _spread_history(page_model: Any) -> None:
    """Each live page published at its own moment of the past weeks."""
    now = timezone.now().replace(microsecond=0)
    for number, key in enumerate(page_model.objects.live().order_by("pk").values_list("pk")):
        published = now - dt.timedelta(days=40 - number, hours=number * 7 % 24)
        page_model.objects.filter(pk=key[0]).update(
            first_published_at=published, last_published_at=published
        )


def _publish(parent: Any, page: Any) -> Any:
    parent.add_child(instance=page)
    page.save_revision().publish()
    page.refresh_from_db()
    return page


def _translate(page: Any, locale: Any, **fields: Any) -> Any:
    copy = page.copy_for_translation(locale, copy_parents=True)
    for name, value in fields.items():
        setattr(copy, name, value)
    copy.save_revision().publish()
    return copy


def _image(name: str, colour: tuple[int, int, int]) -> Any:
    from PIL import Image as PillowImage
    from wagtail.images.models import Image

    buffer = io.BytesIO()
    PillowImage.new("RGB", (320, 180), colour).save(buffer, "PNG")
    return Image.objects.create(title=name, file=ImageFile(buffer, name=f"{name}.png"))
