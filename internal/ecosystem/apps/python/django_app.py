"""Django (on psycopg 3, its default when installed): makemigrations and
migrate of the built-in apps (contenttypes, auth, sessions) and of an app
with a ForeignKey, unique_together, a JSONField and a DecimalField; ORM
CRUD, bulk_create, nested atomic blocks (savepoints) recovering from an
IntegrityError, update_or_create, aggregates, and last a JSON key lookup. As
APP_NAME django-test it runs `manage.py test` instead (Django creates and
drops a test database)."""
import os
import sys
from decimal import Decimal
from urllib.parse import urlparse

from ecoapp import APP, URL, check, main, step

here = os.path.dirname(os.path.abspath(__file__))
work = os.environ.get("WORK_DIR", ".")
sys.path[:0] = [os.path.join(here, "djangoapp"), work]
os.makedirs(os.path.join(work, "eco_mig"), exist_ok=True)
open(os.path.join(work, "eco_mig", "__init__.py"), "w").close()

u = urlparse(URL)
import django  # noqa: E402
from django.conf import settings  # noqa: E402

settings.configure(
    DATABASES={"default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": u.path.lstrip("/"), "USER": u.username, "PASSWORD": u.password or "",
        "HOST": u.hostname, "PORT": u.port,
    }},
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "django.contrib.sessions", "shop"],
    MIGRATION_MODULES={"shop": "eco_mig.shop"},
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    USE_TZ=True,
    SECRET_KEY="ecosystem",
)
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import IntegrityError, transaction  # noqa: E402
from django.db.models import Avg, Count, Sum  # noqa: E402


@step
def makemigrations():
    call_command("makemigrations", "shop", verbosity=0)


if APP == "django-test":
    @step
    def manage_py_test():
        call_command("test", "shop", interactive=False, verbosity=1)
else:
    @step
    def migrate():
        call_command("migrate", verbosity=0)
        call_command("migrate", verbosity=0)  # a second run finds nothing to do

    @step
    def crud():
        from django.contrib.auth.models import User
        from shop.models import Category, Product
        User.objects.create_user("alice", "alice@example.com", "pw")
        tools = Category.objects.create(name="tools")
        p = Product.objects.create(category=tools, sku="hammer", price=Decimal("12.30"), attrs={"color": "red"})
        p.price += Decimal("0.20")
        p.save()
        check(Product.objects.get(sku="hammer").price == Decimal("12.50"), "price")

    @step
    def bulk_create():
        from shop.models import Category, Product, Review
        cats = Category.objects.bulk_create([Category(name=f"cat{i}") for i in range(5)])
        check(all(c.pk for c in cats), "bulk_create returns ids")
        prods = Product.objects.bulk_create([Product(category=c, sku=f"s{j}", price=Decimal(j) + Decimal("0.99"))
                                             for c in cats for j in range(4)])
        Review.objects.bulk_create([Review(product=p, stars=(p.pk % 5) + 1) for p in prods])
        agg = Product.objects.aggregate(n=Count("id"), total=Sum("price"))
        check(agg["n"] == 21, f"count {agg}")
        check(agg["total"] == Decimal("12.50") + 5 * (Decimal("6") + 4 * Decimal("0.99")), f"total {agg}")
        check(Review.objects.aggregate(a=Avg("stars"))["a"] is not None, "avg")

    @step
    def nested_atomic():
        from shop.models import Category, Product
        with transaction.atomic():
            c = Category.objects.create(name="garden")
            try:
                with transaction.atomic():
                    Product.objects.create(category=c, sku="rake", price=1)
                    Product.objects.create(category=c, sku="rake", price=2)
            except IntegrityError:
                pass
            Product.objects.create(category=c, sku="hose", price=3)
        check(list(Product.objects.filter(category__name="garden").values_list("sku", flat=True)) == ["hose"], "garden")

    @step
    def update_or_create():
        from shop.models import Category, Product
        c = Category.objects.get(name="tools")
        _, created = Product.objects.update_or_create(category=c, sku="hammer", defaults={"price": Decimal("13.00")})
        check(not created, "hammer existed")
        _, created = Product.objects.update_or_create(category=c, sku="saw", defaults={"price": Decimal("20.00")})
        check(created, "saw created")
        check(Category.objects.annotate(n=Count("products")).get(name="tools").n == 2, "tools count")

    @step
    def json_lookup():
        from shop.models import Product
        check(Product.objects.filter(attrs__color="red").count() == 1, "json lookup")

main()
