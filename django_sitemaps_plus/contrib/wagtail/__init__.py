"""Sitemaps for Wagtail sites: ``"django_sitemaps_plus.contrib.wagtail"`` in
``INSTALLED_APPS`` serves, for the Wagtail ``Site`` of each request, every
live, public page of that site's tree in every locale, with hreflang
alternates between translations (docs/wagtail.md).
"""
