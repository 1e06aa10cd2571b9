"""Session behaviour real Python clients depend on, run by
TestPythonClientSessions against shepherd and against PostgreSQL 15.

asyncpg: a pool's connection reset (pg_advisory_unlock_all(); CLOSE ALL;
UNLISTEN *; RESET ALL as one query string) after every release, prepared
statements, server_version parsing, advisory locks.
asyncpg cursors (protocol portals) in a transaction.
psycopg 3: statements auto-prepared after prepare_threshold executions,
then a failed transaction and rollback (psycopg sends DEALLOCATE ALL and
prepares again under the same names), SET LOCAL, version(), server-side
cursors (DECLARE, a Describe of the cursor's portal, FETCH, scroll, WITH
HOLD).
psycopg2: a named cursor (DECLARE ... WITHOUT HOLD, FETCH FORWARD n),
as SQLAlchemy's stream_results uses it, and the session set-up.

Usage: sessions.py DSN; prints "ok" and exits 0, or raises.
"""
import asyncio
import re
import sys

dsn = sys.argv[1]


async def with_asyncpg():
    import asyncpg

    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=1)
    for i in range(3):
        async with pool.acquire() as c:
            # The same connection each time: the reset ran in between.
            assert await c.fetchval("SELECT current_setting('application_name')") == ""
            await c.execute("SET application_name = 'pooled'")
            assert await c.fetchval("SELECT pg_try_advisory_lock(42)") is True
            assert await c.fetchval("SELECT $1::int + 1", i) == i + 1
            v = c.get_server_version()
            assert v.major == 15, v
    async with pool.acquire() as c:
        # The reset let go of the advisory lock.
        other = await asyncpg.connect(dsn)
        try:
            assert await other.fetchval("SELECT pg_try_advisory_lock(42)") is True
            assert await other.fetchval("SELECT pg_advisory_unlock(42)") is True
        finally:
            await other.close()
        ver = await c.fetchval("SELECT version()")
        assert re.match(r"PostgreSQL 15\.\d+ ", ver), ver
        async with c.transaction():
            got = [r[0] async for r in c.cursor("SELECT x FROM (VALUES (1), (2), (3)) v(x) ORDER BY x", prefetch=2)]
            assert got == [1, 2, 3], got
            cur = await c.cursor("SELECT x FROM (VALUES (1), (2), (3)) v(x) ORDER BY x")
            assert await cur.fetch(2) == [(1,), (2,)]
            assert await cur.fetchrow() == (3,)
    await pool.close()


def with_psycopg():
    import psycopg

    with psycopg.connect(dsn) as conn:
        conn.prepare_threshold = 1
        cur = conn.cursor()
        for _ in range(3):
            cur.execute("SELECT %s::int", (1,))
            assert cur.fetchone() == (1,)
        cur.execute("SELECT current_user = session_user")
        assert cur.fetchone() == (True,)
        try:
            cur.execute("SELECT current_setting('no_such_setting')")
        except psycopg.errors.UndefinedObject:
            pass
        else:
            raise AssertionError("current_setting of an unknown name did not fail with 42704")
        conn.rollback()  # psycopg sends DEALLOCATE ALL here
        for _ in range(3):
            cur.execute("SELECT %s::int", (2,))
            assert cur.fetchone() == (2,)
        cur.execute("SET LOCAL search_path = somewhere")
        cur.execute("SHOW search_path")
        assert cur.fetchone() == ("somewhere",)
        conn.commit()
        cur.execute("SHOW search_path")
        assert cur.fetchone() == ('"$user", public',)
        conn.commit()
        assert conn.info.server_version // 10000 == 15
        # Server-side cursors. (DDL in autocommit: inside a block,
        # shepherd refuses it when MariaDB is a replica.)
        with psycopg.connect(dsn, autocommit=True) as ddl:
            ddl.execute("DROP TABLE IF EXISTS sc")
            ddl.execute("CREATE TABLE sc (id int PRIMARY KEY, s text)")
        conn.execute("INSERT INTO sc VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
        conn.commit()
        with conn.cursor(name="named", scrollable=True) as sc:
            sc.itersize = 2
            sc.execute("SELECT id, s FROM sc WHERE id > %s ORDER BY id", (1,))
            assert [d.name for d in sc.description] == ["id", "s"]
            assert sc.fetchone() == (2, "b")
            assert sc.fetchmany(2) == [(3, "c"), (4, "d")]
            sc.scroll(0, mode="absolute")
            assert list(sc) == [(2, "b"), (3, "c"), (4, "d"), (5, "e")]
        conn.commit()
        with conn.cursor(name="held", withhold=True) as sc:
            sc.execute("SELECT id FROM sc ORDER BY id")
            conn.commit()
            assert sc.fetchall() == [(1,), (2,), (3,), (4,), (5,)]
        conn.commit()
        assert re.match(r"PostgreSQL 15\.\d+ ", conn.execute("SELECT pg_catalog.version()").fetchone()[0])


def with_psycopg2():
    import psycopg2

    conn = psycopg2.connect(dsn)
    assert conn.server_version // 10000 == 15
    cur = conn.cursor()
    cur.execute("SELECT current_setting('standard_conforming_strings'), current_user = session_user")
    assert cur.fetchone() == ("on", True)
    named = conn.cursor("stream")
    named.itersize = 2
    named.execute("SELECT x FROM (VALUES (1), (2), (3), (4), (5)) v(x) ORDER BY x")
    assert [r[0] for r in named] == [1, 2, 3, 4, 5]
    named.close()
    conn.rollback()
    conn.close()


asyncio.run(with_asyncpg())
with_psycopg()
with_psycopg2()
print("ok")
