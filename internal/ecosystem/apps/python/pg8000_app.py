"""pg8000 (DB-API, pure Python, default options: a transaction opened
implicitly, parameters bound server-side): DDL in that transaction, CRUD
with numeric and json, a unique violation recovered by rollback, and
its native interface's COPY in and out."""
import io
from decimal import Decimal
from urllib.parse import urlparse

import pg8000.dbapi
import pg8000.native

from ecoapp import URL, check, main, step

u = urlparse(URL)
args = dict(user=u.username, password=u.password, host=u.hostname, port=u.port, database=u.path.lstrip("/"))
conn = None


@step
def connect():
    global conn
    conn = pg8000.dbapi.connect(**args)


@step
def create_schema():
    cur = conn.cursor()
    cur.execute("CREATE TABLE artist (id serial PRIMARY KEY, name text NOT NULL UNIQUE)")
    cur.execute("""CREATE TABLE track (id serial PRIMARY KEY,
        artist_id integer NOT NULL REFERENCES artist(id), title text NOT NULL,
        seconds integer NOT NULL, price numeric(6,2), tags json,
        UNIQUE (artist_id, title))""")
    conn.commit()


@step
def crud():
    cur = conn.cursor()
    cur.execute("INSERT INTO artist (name) VALUES (%s) RETURNING id", ("Nina Simone",))
    aid = cur.fetchone()[0]
    cur.executemany("INSERT INTO track (artist_id, title, seconds, price, tags) VALUES (%s, %s, %s, %s, %s)",
                    [(aid, "Sinnerman", 622, Decimal("1.29"), '["jazz"]'),
                     (aid, "Feeling Good", 177, Decimal("0.99"), '["soul"]')])
    conn.commit()
    cur.execute("SELECT sum(seconds), sum(price) FROM track")
    row = cur.fetchone()
    check(row[0] == 799 and row[1] == Decimal("2.28"), f"sums {row}")
    conn.commit()


@step
def unique_violation_rolls_back():
    cur = conn.cursor()
    try:
        cur.execute("INSERT INTO artist (name) VALUES (%s)", ("Nina Simone",))
        raise AssertionError("duplicate accepted")
    except pg8000.dbapi.DatabaseError as e:
        check(e.args[0]["C"] == "23505", f"duplicate: {e}")
        conn.rollback()
    cur.execute("SELECT count(*) FROM artist")
    check(cur.fetchone()[0] == 1, "artists")
    conn.commit()


@step
def copy_native():
    nc = pg8000.native.Connection(**args)
    nc.run("COPY track (artist_id, title, seconds) FROM STDIN WITH (FORMAT csv)",
           stream=io.StringIO("".join(f"1,Take {i},{i}\n" for i in range(30))))
    out = io.StringIO()
    nc.run("COPY (SELECT title FROM track WHERE title LIKE 'Take%' ORDER BY seconds) TO STDOUT", stream=out)
    lines = out.getvalue().splitlines()
    check(len(lines) == 30 and lines[2] == "Take 2", f"copy out {lines[:3]}")
    nc.close()


@step
def close():
    conn.close()


main()
