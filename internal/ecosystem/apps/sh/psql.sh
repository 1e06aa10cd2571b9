# psql 15: a schema from a script, the \d family (\dt \d \d+ \di \ds \dv
# \dn \du \df \dT \l), \copy in and out, and ON_ERROR_ROLLBACK inside a
# transaction block.
. "$(dirname "$0")/lib.sh"

step schema
q <<'SQL'
CREATE TABLE author (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE book (
  id serial PRIMARY KEY,
  author_id integer NOT NULL REFERENCES author(id),
  title varchar(200) NOT NULL,
  price numeric(10,2) NOT NULL CHECK (price >= 0),
  UNIQUE (author_id, title));
CREATE INDEX book_price_idx ON book (price);
CREATE VIEW cheap_book AS SELECT title, price FROM book WHERE price < 10;
INSERT INTO author (name) VALUES ('Tolstoy'), ('Chekhov');
SQL

step dt
out=$(q -c '\dt')
has "$out" 'author +\| table' '\dt lists author'
has "$out" 'book +\| table' '\dt lists book'
step d_table
out=$(q -c '\d book')
has "$out" 'price +\| numeric\(10,2\)' '\d book shows price'
has "$out" 'book_pkey' '\d book shows the primary key'
has "$out" 'FOREIGN KEY \(author_id\) REFERENCES author\(id\)' '\d book shows the foreign key'
has "$out" 'book_price_idx' '\d book shows the index'
step d_plus
out=$(q -c '\d+ author')
has "$out" 'Referenced by' '\d+ author shows what references it'
step di
has "$(q -c '\di')" 'book_price_idx' '\di'
step ds
has "$(q -c '\ds')" 'book_id_seq' '\ds'
step dv
has "$(q -c '\dv')" 'cheap_book' '\dv'
step dn
has "$(q -c '\dn')" 'public' '\dn'
step du
has "$(q -c '\du')" 'Role name' '\du'
step df
q -c '\df' >/dev/null
step dT
q -c '\dT' >/dev/null
step l
has "$(q -c '\l')" 'Name' '\l'

step copy_in
aid=$(q -At -c "SELECT id FROM author WHERE name = 'Chekhov'")
for i in $(seq 1 30); do echo "$aid,Story $i,$i.5"; done >books.csv
q -c "\\copy book (author_id, title, price) FROM 'books.csv' WITH (FORMAT csv)" >/dev/null
step copy_out
q -c "\\copy (SELECT title, price FROM book ORDER BY id) TO 'out.csv' WITH (FORMAT csv)" >/dev/null
[ "$(wc -l <out.csv)" -eq 30 ] || fail "out.csv has $(wc -l <out.csv) lines"
[ "$(sed -n 2p out.csv)" = "Story 2,2.50" ] || fail "line 2 of out.csv: $(sed -n 2p out.csv)"

step on_error_rollback
out=$(psql -X -q -v ON_ERROR_ROLLBACK=on 2>&1 <<'SQL'
BEGIN;
INSERT INTO author (name) VALUES ('Gogol');
INSERT INTO author (name) VALUES ('Gogol');
INSERT INTO author (name) VALUES ('Pushkin');
COMMIT;
SQL
)
has "$out" 'duplicate key value violates unique constraint "author_name_key"' 'the duplicate is reported as PostgreSQL does'
n=$(q -At -c "SELECT count(*) FROM author")
[ "$n" = 4 ] || fail "authors after ON_ERROR_ROLLBACK: $n, want 4 ($out)"
finish
