"""psycopg 3 with default options: DDL in the implicit transaction, CRUD,
a nested transaction (savepoint) that rolls back, COPY text and binary in
and out, pipeline mode, a server-side cursor, and a statement run often
enough to be auto-prepared followed by a rollback (psycopg then sends
DEALLOCATE ALL)."""
from decimal import Decimal

import psycopg
from psycopg.types.json import Jsonb

from ecoapp import URL, check, main, step

conn = None


@step
def connect():
    global conn
    conn = psycopg.connect(URL)


@step
def create_schema():
    conn.execute("CREATE TABLE author (id serial PRIMARY KEY, name text NOT NULL UNIQUE)")
    conn.execute("""CREATE TABLE book (
        id serial PRIMARY KEY,
        author_id integer NOT NULL REFERENCES author(id),
        title text NOT NULL,
        price numeric(10,2) NOT NULL,
        meta jsonb,
        UNIQUE (author_id, title))""")
    conn.commit()


@step
def crud():
    aid = conn.execute("INSERT INTO author (name) VALUES (%s) RETURNING id", ("Borges",)).fetchone()[0]
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO book (author_id, title, price, meta) VALUES (%s, %s, %s, %s)",
                        [(aid, "Ficciones", Decimal("8.00"), Jsonb({"lang": "es"})),
                         (aid, "El Aleph", Decimal("7.50"), Jsonb({"lang": "es"}))])
    conn.commit()
    row = conn.execute("SELECT sum(price), count(*) FROM book").fetchone()
    check(row == (Decimal("15.50"), 2), f"sum/count {row}")
    conn.commit()


@step
def nested_transaction():
    with conn.transaction():
        conn.execute("INSERT INTO author (name) VALUES ('Calvino')")
        try:
            with conn.transaction():
                conn.execute("INSERT INTO author (name) VALUES ('Borges')")
        except psycopg.errors.UniqueViolation:
            pass
    n = conn.execute("SELECT count(*) FROM author").fetchone()[0]
    check(n == 2, f"authors {n}")
    conn.commit()


@step
def copy_text_and_binary():
    aid = conn.execute("SELECT id FROM author WHERE name = 'Calvino'").fetchone()[0]
    with conn.cursor() as cur:
        with cur.copy("COPY book (author_id, title, price) FROM STDIN") as cp:
            for i in range(20):
                cp.write_row((aid, f"Text {i}", Decimal("1.10")))
        with cur.copy("COPY book (author_id, title, price) FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int4", "text", "numeric"])
            for i in range(20):
                cp.write_row((aid, f"Binary {i}", Decimal("2.20")))
        conn.commit()
        rows = []
        with cur.copy("COPY (SELECT title, price FROM book WHERE author_id = %s ORDER BY id) TO STDOUT", (aid,)) as cp:
            for row in cp.rows():
                rows.append(row)
        check(len(rows) == 40 and rows[20] == ("Binary 0", "2.20"), f"copy out {rows[19:21]}")
    conn.commit()


@step
def pipeline():
    with conn.pipeline():
        cur1 = conn.execute("SELECT count(*) FROM book")
        cur2 = conn.execute("UPDATE book SET price = price * 2 WHERE title = %s", ("Ficciones",))
        cur3 = conn.execute("SELECT price FROM book WHERE title = %s", ("Ficciones",))
    check(cur1.fetchone()[0] == 42, "pipeline count")
    check(cur2.rowcount == 1, "pipeline update")
    check(cur3.fetchone()[0] == Decimal("16.00"), "pipeline price")
    conn.commit()


@step
def server_side_cursor():
    with conn.cursor(name="books") as cur:
        cur.itersize = 5
        cur.execute("SELECT id, title FROM book ORDER BY id")
        n = sum(1 for _ in cur)
    check(n == 42, f"server cursor rows {n}")
    conn.commit()


@step
def auto_prepare_then_rollback():
    for i in range(8):  # prepare_threshold is 5
        conn.execute("SELECT title FROM book WHERE id = %s", (i,)).fetchall()
    conn.rollback()
    n = conn.execute("SELECT count(*) FROM book").fetchone()[0]
    check(n == 42, "count after rollback")
    conn.rollback()


@step
def close():
    conn.close()


main()
