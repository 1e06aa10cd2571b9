from django.db import models


class Category(models.Model):
    name = models.CharField(max_length=50, unique=True)


class Product(models.Model):
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="products")
    sku = models.CharField(max_length=20)
    price = models.DecimalField(max_digits=10, decimal_places=2)
    attrs = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("category", "sku")]


class Review(models.Model):
    product = models.ForeignKey(Product, on_delete=models.CASCADE)
    stars = models.SmallIntegerField()
    text = models.TextField(blank=True)
