"""Sitemaps for django CMS sites: ``"django_sitemaps_plus.contrib.djangocms"``
in ``INSTALLED_APPS`` serves, for the current site, every page in each public
language in which it has a published version (djangocms-versioning), with
reciprocal hreflang alternates between its languages (docs/djangocms.md).
"""
