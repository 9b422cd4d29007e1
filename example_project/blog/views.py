from __future__ import annotations

from django.views.generic import DetailView, ListView

from blog.models import Article


class ArticleListView(ListView):
    queryset = Article.objects.filter(is_published=True).only("title", "slug", "published_at")
    paginate_by = 20
    template_name = "blog/article_list.html"


class ArticleDetailView(DetailView):
    # Drafts are not public: the sitemap lists published articles only, and so
    # does this view.
    queryset = Article.objects.filter(is_published=True).prefetch_related("tags", "comments")
    template_name = "blog/article_detail.html"
