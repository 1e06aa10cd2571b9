"""peewee with PostgresqlDatabase (psycopg2) and default options:
create_tables (it checks which exist through the catalogs), a foreign
key, a unique index over two columns, DecimalField and BinaryJSONField,
insert_many, get_or_create, nested atomic (savepoint) after an
IntegrityError, the introspection of playhouse.reflection, and last a
join with a jsonb containment (@>) test."""
from decimal import Decimal
from urllib.parse import urlparse

from peewee import (CharField, DecimalField, ForeignKeyField, IntegrityError,
                    Model, fn)
from playhouse.postgres_ext import BinaryJSONField, PostgresqlExtDatabase
from playhouse.reflection import Introspector

from ecoapp import URL, check, main, step

u = urlparse(URL)
db = PostgresqlExtDatabase(u.path.lstrip("/"), user=u.username, password=u.password, host=u.hostname, port=u.port)


class Base(Model):
    class Meta:
        database = db


class Brand(Base):
    name = CharField(unique=True)


class Car(Base):
    brand = ForeignKeyField(Brand, backref="cars")
    model = CharField()
    price = DecimalField(max_digits=10, decimal_places=2)
    # index=False: its default GIN index is no part of issue 15 and would
    # hide the rest of the app.
    specs = BinaryJSONField(default=dict, index=False)

    class Meta:
        indexes = ((("brand", "model"), True),)


@step
def create_tables():
    db.connect()
    db.create_tables([Brand, Car])
    db.create_tables([Brand, Car])  # safe=True: finds them and does nothing


@step
def insert_many_and_query():
    b = Brand.create(name="Volvo")
    Car.insert_many([{"brand": b, "model": m, "price": Decimal(p), "specs": {"seats": s}}
                     for m, p, s in [("240", "9999.99", 5), ("P1800", "45000.00", 2), ("V70", "12000.50", 5)]]).execute()
    total = Car.select(fn.SUM(Car.price)).scalar()
    check(total == Decimal("67000.49"), f"total {total}")


@step
def get_or_create():
    _, created = Brand.get_or_create(name="Volvo")
    check(not created, "Volvo existed")
    _, created = Brand.get_or_create(name="Saab")
    check(created, "Saab created")


@step
def nested_atomic():
    with db.atomic():
        saab = Brand.get(Brand.name == "Saab")
        Car.create(brand=saab, model="900", price=Decimal("8000"))
        try:
            with db.atomic():
                Car.create(brand=saab, model="900", price=Decimal("1"))
        except IntegrityError:
            pass
    check(Car.select().where(Car.brand == saab).count() == 1, "saabs")


@step
def reflection():
    models = Introspector.from_database(db).generate_models()
    check({"brand", "car"} <= set(models), f"models {sorted(models)}")
    fields = models["car"]._meta.fields
    check(set(fields) >= {"brand", "model", "price", "specs"}, f"fields {sorted(fields)}")


@step
def json_query():
    five = Car.select().join(Brand).where((Brand.name == "Volvo") & Car.specs.contains({"seats": 5})).count()
    check(five == 2, f"five seats {five}")


main()
