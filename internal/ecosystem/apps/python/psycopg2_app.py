"""psycopg2 with default options (a transaction opened implicitly): DDL in
that transaction, CRUD, a unique violation recovered by rollback, a named
(server-side) cursor, copy_expert in and out, json and numeric."""
import io
from decimal import Decimal

import psycopg2
import psycopg2.errors
import psycopg2.extras

from ecoapp import URL, check, main, step

conn = None


@step
def connect():
    global conn
    conn = psycopg2.connect(URL)


@step
def create_schema():
    cur = conn.cursor()
    cur.execute("""CREATE TABLE author (
        id serial PRIMARY KEY, name text NOT NULL UNIQUE)""")
    cur.execute("""CREATE TABLE book (
        id serial PRIMARY KEY,
        author_id integer NOT NULL REFERENCES author(id),
        title text NOT NULL,
        price numeric(10,2) NOT NULL,
        meta jsonb,
        UNIQUE (author_id, title))""")
    conn.commit()


@step
def crud():
    cur = conn.cursor()
    cur.execute("INSERT INTO author (name) VALUES (%s) RETURNING id", ("Le Guin",))
    aid = cur.fetchone()[0]
    cur.executemany("INSERT INTO book (author_id, title, price, meta) VALUES (%s, %s, %s, %s)",
                    [(aid, "The Dispossessed", Decimal("12.50"), psycopg2.extras.Json({"pages": 387})),
                     (aid, "The Lathe of Heaven", Decimal("9.99"), psycopg2.extras.Json({"pages": 184}))])
    cur.execute("UPDATE book SET price = price + 1 WHERE title = %s", ("The Lathe of Heaven",))
    check(cur.rowcount == 1, f"update rowcount {cur.rowcount}")
    conn.commit()
    cur.execute("SELECT title, price, meta FROM book ORDER BY title")
    rows = cur.fetchall()
    check(rows[1][1] == Decimal("10.99"), f"price {rows[1][1]!r}")
    check(rows[0][2] == {"pages": 387}, f"meta {rows[0][2]!r}")
    conn.commit()


@step
def unique_violation_rolls_back():
    cur = conn.cursor()
    try:
        cur.execute("INSERT INTO author (name) VALUES (%s)", ("Le Guin",))
        raise AssertionError("duplicate name accepted")
    except psycopg2.errors.UniqueViolation:
        conn.rollback()
    cur.execute("SELECT count(*) FROM author")
    check(cur.fetchone()[0] == 1, "author count")
    conn.commit()


@step
def named_cursor():
    cur = conn.cursor(name="books_cur")
    cur.itersize = 1
    cur.execute("SELECT id, title FROM book ORDER BY id")
    titles = [r[1] for r in cur]
    check(len(titles) == 2, f"titles {titles}")
    cur.close()
    conn.commit()


@step
def copy_expert():
    cur = conn.cursor()
    cur.execute("SELECT id FROM author")
    aid = cur.fetchone()[0]
    data = io.StringIO("".join(f"{aid},Book {i},{i}.25\n" for i in range(50)))
    cur.copy_expert("COPY book (author_id, title, price) FROM STDIN WITH (FORMAT csv)", data)
    conn.commit()
    out = io.StringIO()
    cur.copy_expert("COPY (SELECT title, price FROM book WHERE title LIKE 'Book %%' ORDER BY id) TO STDOUT WITH (FORMAT csv)", out)
    lines = out.getvalue().splitlines()
    check(len(lines) == 50 and lines[3] == "Book 3,3.25", f"copy out {lines[:4]}")
    conn.commit()


@step
def close():
    conn.close()


main()
