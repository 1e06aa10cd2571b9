"""Alembic (on SQLAlchemy and psycopg2, default options): init a
migration environment, autogenerate the first revision from models,
upgrade online, change the models and autogenerate again (the diff comes
from reflecting the database, so it checks the catalogs), upgrade,
downgrade one step and upgrade again, then `alembic check` finds nothing
left to generate."""
import os
import sys
import types

from alembic import command
from alembic.config import Config
from sqlalchemy import (JSON, Column, ForeignKey, Integer, MetaData, Numeric,
                        String, Table, UniqueConstraint, create_engine,
                        inspect)

from ecoapp import URL, check, main, step

work = os.environ.get("WORK_DIR", ".")
mig = os.path.join(work, "migrations")
cfg = Config(os.path.join(work, "alembic.ini"))
metadata = MetaData()
Table("supplier", metadata,
      Column("id", Integer, primary_key=True),
      Column("name", String(80), nullable=False, unique=True))
part = Table("part", metadata,
             Column("id", Integer, primary_key=True),
             Column("supplier_id", Integer, ForeignKey("supplier.id"), nullable=False),
             Column("sku", String(20), nullable=False),
             Column("price", Numeric(10, 2), nullable=False),
             UniqueConstraint("supplier_id", "sku"))
sys.modules["eco_models"] = types.SimpleNamespace(metadata=metadata)


def revisions():
    return sorted(f for f in os.listdir(os.path.join(mig, "versions")) if f.endswith(".py"))


@step
def init():
    command.init(cfg, mig)
    env = os.path.join(mig, "env.py")
    with open(env) as f:
        src = f.read()
    with open(env, "w") as f:
        f.write(src.replace("target_metadata = None", "import eco_models\ntarget_metadata = eco_models.metadata"))
    cfg.set_main_option("sqlalchemy.url", URL)


@step
def autogenerate_first():
    command.revision(cfg, message="initial", autogenerate=True)
    check(len(revisions()) == 1, "one revision")


@step
def upgrade_first():
    command.upgrade(cfg, "head")
    insp = inspect(create_engine(URL))
    check({"supplier", "part", "alembic_version"} <= set(insp.get_table_names()), f"tables {insp.get_table_names()}")


@step
def autogenerate_change():
    part.append_column(Column("attrs", JSON))
    Table("stock", metadata,
          Column("part_id", Integer, ForeignKey("part.id"), primary_key=True),
          Column("qty", Integer, nullable=False, server_default="0"))
    command.revision(cfg, message="stock", autogenerate=True)
    revs = revisions()
    check(len(revs) == 2, f"revisions {revs}")
    src = open(os.path.join(mig, "versions", [r for r in revs if "stock" in r][0])).read()
    check("create_table('stock'" in src and "add_column('part'" in src, "second revision content")
    check("drop_" not in src.split("def downgrade")[0], "autogenerate wants to drop something:\n" + src)


@step
def upgrade_downgrade_upgrade():
    command.upgrade(cfg, "head")
    command.downgrade(cfg, "-1")
    check("stock" not in inspect(create_engine(URL)).get_table_names(), "stock after downgrade")
    command.upgrade(cfg, "head")


@step
def nothing_left():
    command.check(cfg)


main()
