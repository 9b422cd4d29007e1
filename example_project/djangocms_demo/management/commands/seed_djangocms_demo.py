"""``manage.py seed_djangocms_demo``: an English and French django CMS site.

Seeds only a database without pages. The pages show every rule of the
integration: pages published in both languages (hreflang alternates), one in
English only, a login-only page, a draft that was never published, a French
translation left as a draft, and a page an editor took out of the sitemap.
Publication times are spread over the past weeks, as a site's history would
have them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

TEMPLATE = "djangocms_demo/page.html"


class Command(BaseCommand):
    help = "Seed the django CMS demo's pages (only when there are none)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="the Site's host")
        parser.add_argument("--port", type=int, default=8000, help="the server's port")

    def handle(self, *args: Any, **options: Any) -> None:
        from cms.models import Page

        if Page.objects.exists():
            self.stdout.write("Demo pages exist; nothing seeded.")
            return
        with transaction.atomic():
            self._seed(options["host"], options["port"])
        self.stdout.write("Seeded the django CMS demo: English and French pages.")

    def _seed(self, host: str, port: int) -> None:
        from cms.api import create_page, create_page_content
        from django.contrib.auth import get_user_model
        from django.contrib.sites.models import Site

        from django_sitemaps_plus.contrib.djangocms.models import PageSitemapSettings

        site = Site.objects.get_current()
        site.domain = f"{host}:{port}" if port != 80 else host
        site.name = "django CMS demo"
        site.save()
        user = get_user_model().objects.filter(is_superuser=True).first()
        if user is None:
            user = get_user_model().objects.create_superuser(
                "demo", "demo@example.com", "demo-only-not-secret"
            )
        days = iter(range(30, 0, -2))

        def page(title: str, slug: str, parent: Any = None, **options: Any) -> Any:
            return create_page(
                title, TEMPLATE, "en", slug=slug, parent=parent, created_by=user,
                site=site, in_navigation=True, **options,
            )  # fmt: skip

        def translate(target: Any, title: str, slug: str) -> None:
            create_page_content("fr", title, target, slug=slug, created_by=user)

        def publish(target: Any, language: str = "en") -> None:
            from cms.models import PageContent
            from djangocms_versioning.models import Version

            version = Version.objects.get(
                cms_pagecontent__page=target, cms_pagecontent__language=language, state="draft"
            )
            version.publish(user)
            # Published (and last edited) some days ago.
            when = timezone.now() - dt.timedelta(days=next(days))
            Version.objects.filter(pk=version.pk).update(modified=when)
            PageContent._base_manager.filter(pk=version.object_id).update(changed_date=when)

        home = page("Welcome", "home")
        translate(home, "Bienvenue", "accueil")
        publish(home)
        publish(home, "fr")
        home.set_as_homepage(user)
        about = page("About", "about", home)
        translate(about, "À propos", "a-propos")
        publish(about)
        publish(about, "fr")
        team = page("Team", "team", about)  # English only
        publish(team)
        members = page("Members", "members", home, login_required=True)
        publish(members)
        page("Coming soon", "coming-soon", home)  # a draft, never published
        news = page("News", "news", home)
        translate(news, "Actualités", "actualites")  # the French stays a draft
        publish(news)
        thanks = page("Thank you", "thanks", home)
        publish(thanks)
        PageSitemapSettings.objects.create(extended_object=thanks, show_in_sitemap=False)
