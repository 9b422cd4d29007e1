"""Models for the extension tests: translated (django-parler), with images,
news and videos. Files are FileFields, so no Pillow is needed."""

from __future__ import annotations

from django.db import models
from django.urls import reverse
from parler.models import TranslatableModel, TranslatedFields


class Story(TranslatableModel):  # type: ignore[misc]  # parler ships no types
    """Translated with django-parler: exists in the languages it has rows for."""

    translations = TranslatedFields(
        title=models.CharField(max_length=200),
        slug=models.SlugField(max_length=200, allow_unicode=True),
    )
    updated_at = models.DateTimeField(null=True, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("story", kwargs={"slug": self.slug})


class Place(models.Model):
    """Not translated: the same slug under every language prefix (fast path)."""

    # Long enough for the 20-language byte-cap test; no index (MariaDB key limit).
    slug = models.CharField(max_length=2_000)
    updated_at = models.DateTimeField(null=True, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("place", kwargs={"slug": self.slug})


class Gallery(models.Model):
    slug = models.SlugField(max_length=200)
    cover = models.FileField(upload_to="covers/", blank=True)
    external_image = models.URLField(max_length=500, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("gallery", kwargs={"slug": self.slug})

    def sitemap_images(self) -> list[object]:
        return [self.cover, self.external_image, *(p.file for p in self.photos.all())]


class Photo(models.Model):
    gallery = models.ForeignKey(Gallery, on_delete=models.CASCADE, related_name="photos")
    file = models.FileField(upload_to="photos/")


class NewsItem(models.Model):
    title = models.CharField(max_length=300)
    slug = models.SlugField(max_length=200)
    published_at = models.DateTimeField()
    updated_at = models.DateTimeField(null=True, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("newsitem", kwargs={"slug": self.slug})


class Clip(models.Model):
    slug = models.SlugField(max_length=200)
    title = models.CharField(max_length=100)
    description = models.TextField()
    thumbnail = models.FileField(upload_to="thumbs/")
    file = models.FileField(upload_to="clips/", blank=True)
    player_url = models.URLField(blank=True)
    seconds = models.PositiveIntegerField(null=True, blank=True)
    rating = models.DecimalField(max_digits=3, decimal_places=1, null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    #: Comma-separated ("steak, grill"): feeds VideoInfo.tags.
    tags = models.CharField(max_length=500, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("clip", kwargs={"slug": self.slug})


class Guide(models.Model):  # type: ignore[django-manager-missing]  # modeltranslation
    """Translated with django-modeltranslation (tests/i18napp/translation.py):
    exists in the languages whose title column is filled."""

    title = models.CharField(max_length=200, blank=True)
    slug = models.SlugField(max_length=200, allow_unicode=True, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("guide", kwargs={"slug": self.slug})


class Dispatch(models.Model):
    """A news entry dated by its story: ``date_field`` across a relation."""

    story = models.ForeignKey(NewsItem, on_delete=models.CASCADE, related_name="dispatches")
    headline = models.CharField(max_length=300)
    slug = models.SlugField(max_length=200)

    def get_absolute_url(self) -> str:
        return reverse("newsitem", kwargs={"slug": self.slug})
