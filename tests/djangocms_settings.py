"""Settings for the django CMS integration's tests (``tests/cms_djangocms``).

django CMS is not in the default test environment: these tests run in their
own (``tox -e py313-django61-djangocms51-sqlite``, ``.ci/run``), where a
missing django CMS is an import error, never a skip.
"""

from __future__ import annotations

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS, MIDDLEWARE, TEMPLATES

INSTALLED_APPS = [
    *(app for app in INSTALLED_APPS if app not in ("tests.i18napp", "modeltranslation", "parler")),
    "django_sitemaps_plus.contrib.djangocms",
    "cms",
    "menus",
    "treebeard",
    "sekizai",
    "djangocms_versioning",
    # A page template and a plugin with an image (tests/djangocmsapp).
    "tests.djangocmsapp",
]
MIDDLEWARE = [
    *MIDDLEWARE,
    "django.middleware.locale.LocaleMiddleware",
    "cms.middleware.user.CurrentUserMiddleware",
    "cms.middleware.page.CurrentPageMiddleware",
    "cms.middleware.toolbar.ToolbarMiddleware",
    "cms.middleware.language.LanguageCookieMiddleware",
]
# tests.settings' templates, plus what django CMS's page templates use.
TEMPLATES = [
    {
        **TEMPLATES[0],
        "OPTIONS": {
            "context_processors": [
                *TEMPLATES[0]["OPTIONS"]["context_processors"],
                "django.template.context_processors.i18n",
                "sekizai.context_processors.sekizai",
                "cms.context_processors.cms_settings",
            ]
        },
    }
]
ROOT_URLCONF = "tests.djangocms_urls"
USE_I18N = True
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("fr", "Français"), ("de", "Deutsch")]
# German is configured but not public: never listed.
CMS_LANGUAGES = {
    1: [
        {"code": "en", "name": "English"},
        {"code": "fr", "name": "Français"},
        {"code": "de", "name": "Deutsch", "public": False},
    ],
    "default": {"fallbacks": ["en"], "redirect_on_fallback": False, "hide_untranslated": False},
}
CMS_TEMPLATES = [("djangocmsapp/page.html", "Page")]
# View restrictions (PagePermission.can_view) are only read with permissions on.
CMS_PERMISSION = True
CMS_CONFIRM_VERSION4 = True
DJANGOCMS_VERSIONING_ALLOW_DELETING_VERSIONS = True
# The sites are the Sites framework's: SITE_ID (or the request's site) gives the base URL.
SITEMAPS_PLUS = {"CACHE": False}
STATIC_URL = "/static/"
MEDIA_URL = "/media/"
# django CMS 5.1's PageManager and treebeard 5.3 (a warning about treebeard 6).
SILENCED_SYSTEM_CHECKS = ["treebeard.E001"]
