from decimal import Decimal

from django.db import IntegrityError, transaction
from django.test import TestCase

from .models import Category, Product


class ShopTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.cat = Category.objects.create(name="tools")

    def test_create_and_total(self):
        Product.objects.create(category=self.cat, sku="h1", price=Decimal("3.50"))
        Product.objects.create(category=self.cat, sku="h2", price=Decimal("1.25"))
        self.assertEqual(self.cat.products.count(), 2)

    def test_unique_together(self):
        Product.objects.create(category=self.cat, sku="x", price=1)
        with self.assertRaises(IntegrityError), transaction.atomic():
            Product.objects.create(category=self.cat, sku="x", price=2)
        self.assertEqual(Product.objects.count(), 1)
