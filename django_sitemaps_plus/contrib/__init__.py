"""Ready-made integrations with content management systems built on Django.

Each is an optional sub-app with its own extra: ``contrib.wagtail``
(``pip install django-sitemaps-plus[wagtail]``). They build on the core's
per-request sites (``SiteContext.site``, docs/sites.md).
"""
