from __future__ import annotations

from django.views.generic import DetailView, ListView

from shop.models import Product


class ProductListView(ListView):
    queryset = Product.objects.filter(is_active=True).select_related("category")
    paginate_by = 24
    template_name = "shop/product_list.html"


class ProductDetailView(DetailView):
    queryset = (
        Product.objects.filter(is_active=True).select_related("category").prefetch_related("images")
    )
    template_name = "shop/product_detail.html"
