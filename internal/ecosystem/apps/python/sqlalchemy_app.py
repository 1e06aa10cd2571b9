"""SQLAlchemy 2 ORM on psycopg2 (APP_NAME sqlalchemy-psycopg2) or psycopg 3
(sqlalchemy-psycopg3), default engine options: connect, create_all,
inspect (reflection of tables, columns, keys, indexes), bulk insert
(insertmanyvalues), a relationship, begin_nested (savepoint) rolled back
after a unique violation, stream_results."""
from decimal import Decimal

from sqlalchemy import (JSON, ForeignKey, Numeric, String, UniqueConstraint,
                        create_engine, func, inspect, select, text)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import (DeclarativeBase, Mapped, Session, mapped_column,
                            relationship)

from ecoapp import APP, URL, check, main, step

DRIVER = "psycopg" if APP.endswith("psycopg3") else "psycopg2"
engine = None


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customer"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(120), unique=True)
    orders: Mapped[list["Order"]] = relationship(back_populates="customer")


class Order(Base):
    __tablename__ = "orders"
    __table_args__ = (UniqueConstraint("customer_id", "ref"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customer.id"))
    ref: Mapped[str] = mapped_column(String(20))
    total: Mapped[Decimal] = mapped_column(Numeric(12, 2))
    details: Mapped[dict] = mapped_column(JSON, default=dict)
    customer: Mapped[Customer] = relationship(back_populates="orders")


@step
def connect():
    global engine
    engine = create_engine(URL.replace("postgresql://", f"postgresql+{DRIVER}://", 1))
    with engine.connect() as c:
        check(c.execute(text("SELECT 1")).scalar() == 1, "select 1")


@step
def create_all():
    Base.metadata.create_all(engine)


@step
def inspect_schema():
    insp = inspect(engine)
    check(set(insp.get_table_names()) >= {"customer", "orders"}, f"tables {insp.get_table_names()}")
    cols = {c["name"]: c for c in insp.get_columns("orders")}
    check(set(cols) == {"id", "customer_id", "ref", "total", "details"}, f"columns {sorted(cols)}")
    check(str(cols["total"]["type"]) == "NUMERIC(12, 2)", f"total type {cols['total']['type']}")
    check(insp.get_pk_constraint("orders")["constrained_columns"] == ["id"], "pk")
    fks = insp.get_foreign_keys("orders")
    check(len(fks) == 1 and fks[0]["referred_table"] == "customer", f"fks {fks}")
    uqs = insp.get_unique_constraints("orders")
    check(any(u["column_names"] == ["customer_id", "ref"] for u in uqs), f"uniques {uqs}")


@step
def bulk_insert():
    with Session(engine) as s, s.begin():
        cs = [Customer(email=f"c{i}@example.com") for i in range(10)]
        s.add_all(cs)
        s.flush()
        s.add_all([Order(customer=c, ref=f"R{j}", total=Decimal("10.05") * j, details={"n": j})
                   for c in cs for j in range(3)])
    with Session(engine) as s:
        check(s.scalar(select(func.count()).select_from(Order)) == 30, "orders")
        total = s.scalar(select(func.sum(Order.total)))
        check(total == Decimal("301.50"), f"total {total}")


@step
def relationship_and_update():
    with Session(engine) as s, s.begin():
        c = s.scalars(select(Customer).where(Customer.email == "c3@example.com")).one()
        check(len(c.orders) == 3, "orders of c3")
        c.orders[0].details = {"n": 0, "gift": True}
        s.delete(c.orders[1])
    with Session(engine) as s:
        o = s.scalars(select(Order).join(Customer).where(Customer.email == "c3@example.com").order_by(Order.ref)).all()
        check(len(o) == 2 and o[0].details == {"n": 0, "gift": True}, "after update")


@step
def begin_nested():
    with Session(engine) as s, s.begin():
        s.add(Customer(email="new@example.com"))
        try:
            with s.begin_nested():
                s.add(Customer(email="c1@example.com"))
        except IntegrityError:
            pass
    with Session(engine) as s:
        n = s.scalar(select(func.count()).select_from(Customer))
        check(n == 11, f"customers {n}")


@step
def stream_results():
    with engine.connect() as c:
        res = c.execution_options(stream_results=True, max_row_buffer=4).execute(select(Order.id).order_by(Order.id))
        n = sum(1 for _ in res)
        check(n == 29, f"streamed {n}")


main()
