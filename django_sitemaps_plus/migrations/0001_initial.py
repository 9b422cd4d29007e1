from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="SitemapOverview",
            fields=[
                (
                    "id",
                    models.AutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
            ],
            options={
                "verbose_name": "sitemap overview",
                "verbose_name_plural": "sitemap overview",
                "permissions": [("view_sitemap_overview", "Can view the sitemap overview")],
                "managed": False,
                "default_permissions": (),
            },
        ),
    ]
