"""Session behaviour real Python clients depend on, run by
TestPythonClientSessions against shepherd and against PostgreSQL 15.

asyncpg: a pool's connection reset (pg_advisory_unlock_all(); CLOSE ALL;
UNLISTEN *; RESET ALL as one query string) after every release, prepared
statements, server_version parsing, advisory locks.
psycopg 3: statements auto-prepared after prepare_threshold executions,
then a failed transaction and rollback (psycopg sends DEALLOCATE ALL and
prepares again under the same names), SET LOCAL, version().

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
        assert re.match(r"PostgreSQL 15\.\d+ ", conn.execute("SELECT pg_catalog.version()").fetchone()[0])


asyncio.run(with_asyncpg())
with_psycopg()
print("ok")
