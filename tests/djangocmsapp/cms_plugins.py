from __future__ import annotations

from cms.plugin_base import CMSPluginBase
from cms.plugin_pool import plugin_pool

from tests.djangocmsapp.models import TeaserPlugin


@plugin_pool.register_plugin
class Teaser(CMSPluginBase):
    model = TeaserPlugin
    name = "Teaser"
    render_template = "djangocmsapp/teaser.html"
