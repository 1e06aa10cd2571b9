"""asyncpg with default options: a pool (whose connection reset runs
pg_advisory_unlock_all, CLOSE ALL, UNLISTEN *, RESET ALL), type
introspection (json codec set on the connection), prepared statements,
executemany, a transaction with a nested one rolled back,
copy_records_to_table and copy_from_query."""
import asyncio
import io
import json
from decimal import Decimal

import asyncpg

from ecoapp import URL, check, main, step

loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
pool = None


def run(coro):
    return loop.run_until_complete(coro)


async def init_conn(conn):
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


@step
def create_pool():
    global pool
    pool = run(asyncpg.create_pool(URL, min_size=1, max_size=3, init=init_conn))


@step
def create_schema():
    async def go():
        async with pool.acquire() as c:
            await c.execute("""
                CREATE TABLE account (id serial PRIMARY KEY, owner text NOT NULL UNIQUE,
                                      balance numeric(12,2) NOT NULL DEFAULT 0, prefs jsonb);
                CREATE TABLE transfer (id serial PRIMARY KEY,
                                       src integer NOT NULL REFERENCES account(id),
                                       dst integer NOT NULL REFERENCES account(id),
                                       amount numeric(12,2) NOT NULL CHECK (amount > 0));""")
    run(go())


@step
def prepared_and_executemany():
    async def go():
        async with pool.acquire() as c:
            await c.executemany("INSERT INTO account (owner, balance, prefs) VALUES ($1, $2, $3)",
                                [(f"user{i}", Decimal(100), {"tier": i % 3}) for i in range(10)])
            st = await c.prepare("SELECT owner, balance, prefs FROM account WHERE id = $1")
            row = await st.fetchrow(1)
            check(row["owner"] == "user0" and row["balance"] == Decimal("100.00"), f"row {row}")
            check(row["prefs"] == {"tier": 0}, f"prefs {row['prefs']}")
            check([a.name for a in st.get_attributes()] == ["owner", "balance", "prefs"], "attributes")
    run(go())


@step
def transactions():
    async def go():
        async with pool.acquire() as c:
            async with c.transaction():
                await c.execute("UPDATE account SET balance = balance - 30 WHERE id = 1")
                await c.execute("UPDATE account SET balance = balance + 30 WHERE id = 2")
                await c.execute("INSERT INTO transfer (src, dst, amount) VALUES (1, 2, 30)")
                try:
                    async with c.transaction():
                        await c.execute("INSERT INTO transfer (src, dst, amount) VALUES (1, 2, -5)")
                except asyncpg.CheckViolationError:
                    pass
            total = await c.fetchval("SELECT sum(balance) FROM account")
            check(total == Decimal("1000.00"), f"total {total}")
            check(await c.fetchval("SELECT count(*) FROM transfer") == 1, "transfers")
    run(go())


@step
def copy():
    async def go():
        async with pool.acquire() as c:
            res = await c.copy_records_to_table("account", columns=["owner", "balance"],
                                                records=[(f"bulk{i}", Decimal(i)) for i in range(100)])
            check(res == "COPY 100", f"copy result {res}")
            buf = io.BytesIO()
            await c.copy_from_query("SELECT owner FROM account WHERE owner LIKE 'bulk%' ORDER BY id", output=buf)
            check(len(buf.getvalue().splitlines()) == 100, "copy out lines")
    run(go())


@step
def pool_reuse():
    async def go():
        for _ in range(5):  # every release resets the connection
            async with pool.acquire() as c:
                check(await c.fetchval("SELECT count(*) FROM account") == 110, "count")
        await pool.close()
    run(go())


main()
