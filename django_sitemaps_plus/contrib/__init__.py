"""Ready-made integrations with content management systems built on Django.

Each is an optional sub-app with its own extra: ``contrib.wagtail``
(``pip install django-sitemaps-plus[wagtail]``) and ``contrib.djangocms``
(``pip install django-sitemaps-plus[djangocms]``). They build on the core's
per-request sites (``SiteContext.site``, docs/sites.md) and share
``contrib.pages`` (page entries, computed alternates, the editors' checkbox,
page images).

``contrib.django_sitemaps`` is not an app: it holds ``ContribSection``, the
adapter that serves an unchanged ``django.contrib.sitemaps.Sitemap``.
"""
