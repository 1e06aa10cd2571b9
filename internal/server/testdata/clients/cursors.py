"""Server-side cursors as Python clients use them, printed so that the
output against shepherd can be compared with the output against
PostgreSQL 15 (TestPythonCursors).

psycopg2: named cursors (DECLARE "name" CURSOR WITHOUT HOLD, FETCH FORWARD
n in iteration, fetchone/fetchmany/fetchall, scroll as MOVE), SCROLL and
NO SCROLL (scrollable=True/False, the 55000 of a backward scroll), WITH
HOLD across commit. psycopg 3 (when installed): server-side cursors,
binary ones too. SQLAlchemy (when installed): stream_results.

Usage: cursors.py DSN
"""
import sys

dsn = sys.argv[1]
out = []


def say(*args):
    out.append(" ".join(repr(a) for a in args))


def with_psycopg2():
    import psycopg2
    import psycopg2.errors

    # DDL in autocommit: inside a block, shepherd refuses it when MariaDB
    # is a replica.
    ddl = psycopg2.connect(dsn)
    ddl.autocommit = True
    ddl.cursor().execute("DROP TABLE IF EXISTS pycur")
    ddl.cursor().execute(
        "CREATE TABLE pycur (id int PRIMARY KEY, s text, n numeric(8,2), b boolean, t timestamp)"
    )
    ddl.close()
    conn = psycopg2.connect(dsn)
    cur = conn.cursor()
    cur.execute(
        "INSERT INTO pycur VALUES (1, 'a', 1.50, true, '2024-01-02 03:04:05'), (2, NULL, NULL, NULL, NULL),"
        " (3, 'c', -3.25, false, '1999-12-31 23:59:59'), (4, 'd', 4, true, '2000-02-29 00:00:00'),"
        " (5, 'e', 0, false, '2024-06-30 12:00:00')"
    )
    conn.commit()

    named = conn.cursor("stream")
    named.itersize = 2
    named.execute("SELECT id, s, n, b, t FROM pycur ORDER BY id")
    say("iter", [r for r in named])
    say("description", [(d.name, d.type_code) for d in named.description])
    named.close()
    conn.commit()

    sc = conn.cursor("sc", scrollable=True)
    sc.execute("SELECT id, s FROM pycur WHERE id > %s ORDER BY id", (1,))
    say("fetchone", sc.fetchone(), sc.rownumber)
    say("fetchmany", sc.fetchmany(2), sc.rownumber)
    sc.scroll(-2)
    say("after scroll -2", sc.fetchone(), sc.rownumber)
    sc.scroll(0, mode="absolute")
    say("absolute 0", sc.fetchall(), sc.rownumber)
    sc.scroll(1, mode="absolute")
    say("absolute 1", sc.fetchmany(10))
    sc.close()
    conn.commit()

    ns = conn.cursor("ns", scrollable=False)
    ns.execute("SELECT id FROM pycur ORDER BY id")
    say("no scroll", ns.fetchmany(2))
    try:
        ns.scroll(-1)
        say("scrolled back")
    except psycopg2.Error as e:
        say("scroll back", e.pgcode, e.pgerror.splitlines()[0])
    conn.rollback()

    held = conn.cursor("held", withhold=True)
    held.execute("SELECT id, n FROM pycur WHERE id <= 3 ORDER BY id")
    conn.commit()
    cur.execute("UPDATE pycur SET n = 99 WHERE id = 2")
    conn.commit()
    say("held after commit", held.fetchall())
    held.close()

    agg = conn.cursor("agg")
    agg.execute("SELECT count(*), sum(n) FROM pycur")
    say("agg", agg.fetchone())
    try:
        agg.scroll(-1)
        say("scrolled back")
    except psycopg2.Error as e:
        say("agg scroll back", e.pgcode, e.pgerror.splitlines()[0])
    conn.rollback()

    try:
        bad = conn.cursor("bad")
        bad.execute("SELECT id FROM nosuch_table")
        say("bad", bad.fetchall())
    except psycopg2.Error as e:
        say("bad", e.pgcode)
    conn.rollback()
    cur.execute("CLOSE ALL")
    conn.commit()
    conn.close()


def with_psycopg3():
    try:
        import psycopg
    except ImportError:
        return
    with psycopg.connect(dsn) as conn:
        for binary in (False, True):
            with conn.cursor(name="p3", binary=binary, scrollable=True) as sc:
                sc.itersize = 2
                sc.execute("SELECT id, s, n, b, t FROM pycur WHERE id >= %s ORDER BY id", (2,))
                say("psycopg3", binary, sc.fetchmany(3))
                sc.scroll(-2)
                say("psycopg3 scrolled", binary, sc.fetchall())
            conn.commit()
        with conn.cursor(name="p3held", withhold=True) as sc:
            sc.execute("SELECT id FROM pycur ORDER BY id DESC")
            conn.commit()
            say("psycopg3 held", list(sc))


def with_sqlalchemy():
    try:
        import sqlalchemy as sa
    except ImportError:
        return
    for driver in ("psycopg2", "psycopg"):
        try:
            __import__(driver)
        except ImportError:
            continue
        url = "postgresql+%s://%s" % (driver, dsn.split("://", 1)[1])
        # Without the hstore probe, which reads pg_type.
        engine = sa.create_engine(url, use_native_hstore=False)
        with engine.connect() as c:
            res = c.execution_options(stream_results=True, max_row_buffer=2).execute(
                sa.text("SELECT id, s FROM pycur ORDER BY id")
            )
            say("sqlalchemy", driver, [tuple(r) for r in res])
            parts = c.execution_options(yield_per=2).execute(sa.text("SELECT id FROM pycur ORDER BY id"))
            say("sqlalchemy partitions", driver, [[tuple(r) for r in p] for p in parts.partitions()])
        engine.dispose()


with_psycopg2()
with_psycopg3()
with_sqlalchemy()
print("\n".join(out))
