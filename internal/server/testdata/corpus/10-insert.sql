-- Cross-engine SQL corpus: filling the tables.

-- feature: insert: single row
INSERT INTO dept VALUES (1, 'Engineering', 500000.00, '2001-03-15');

INSERT INTO dept (id, name, budget, founded) VALUES (2, 'Sales', 250000.50, '1999-11-30');

INSERT INTO dept (id, name) VALUES (3, 'Support');

-- feature: insert: multi-row
INSERT INTO dept (id, name, budget, founded) VALUES
    (4, 'Research', 750000, '2010-01-01'),
    (5, 'Legal', 0, NULL);

INSERT INTO emp (id, name, dept_id, manager_id, salary, bonus, hired, active, grade, email) VALUES
    (1, 'Ada', 1, NULL, 9500.00, 1200.00, '2015-04-01', true, 5, 'ada@example.com'),
    (2, 'Brian', 1, 1, 7200.50, NULL, '2017-09-12', true, 3, 'brian@example.com'),
    (3, 'Chloé', 1, 1, 7200.50, 300.00, '2018-01-20', true, 3, 'chloe@example.com'),
    (4, 'Dmitri', 2, NULL, 6100.00, 900.00, '2012-06-30', true, 4, NULL),
    (5, 'Eve', 2, 4, 4800.75, NULL, '2020-02-29', false, 2, 'eve@example.com'),
    (6, 'Farah', 2, 4, 5300.00, 150.00, '2019-07-04', true, NULL, 'farah@example.com'),
    (7, 'Gus', 3, NULL, 4100.00, NULL, '2021-12-31', true, 1, NULL),
    (8, 'Hana', 3, 7, 4100.00, 50.00, '2022-03-01', true, 1, 'hana@example.com'),
    (9, 'Ivan', NULL, NULL, 3900.00, NULL, '2023-08-15', false, NULL, 'ivan@example.com'),
    (10, 'Jo', 4, NULL, 8800.00, 2000.00, '2011-10-10', true, 5, 'jo@example.com'),
    (11, 'ken', 4, 10, 6600.00, 0.00, '2016-05-05', true, 4, 'ken@example.com'),
    (12, 'Lu', 4, 10, 6600.00, NULL, '2016-05-05', true, 4, 'lu@example.com');

INSERT INTO product (sku, title, price, weight, rating, stock) VALUES
    ('A-100', 'Widget', 9.99, 0.5, 4.5, 100),
    ('A-200', 'Widget Pro', 19.99, 0.75, 4.25, 40),
    ('B-300', 'Gadget', 24.50, 1.25, 3.5, 0),
    ('B-310', 'Gadget Mini', 12.00, 0.25, NULL, 15),
    ('C-400', 'Doohickey', 5.00, NULL, 2.0, 300),
    ('C-410', 'Doohickey XL', 7.50, 2.5, 2.75, 120),
    ('D-500', 'Thingamajig', 99.95, 10, 5, 3),
    ('E-600', 'Whatsit', 0.10, 0.1, 1.1, 1000000);

INSERT INTO nums (id, a, b, big, x, f, r) VALUES
    (1, 7, 2, 10000000000, 2.500, 0.5, 0.5),
    (2, -7, 2, -3, -2.500, 2.5, 1.25),
    (3, 7, -2, NULL, 1.005, -1.5, -0.75),
    (4, 0, 5, 0, 0.125, 10000000000, 3),
    (5, NULL, 3, 42, NULL, NULL, NULL),
    (6, 10, NULL, 9223372036854775807, 999999.999, 0.1, 0.1),
    (7, 2147483647, 1, 1, -0.001, 1e-7, 100),
    (8, 15, 4, 15, 3.333, 3.25, 2.5),
    (9, 5, 0, 5, 7.000, 0, 0);

INSERT INTO words (id, w, code, lang) VALUES
    (1, 'apple', 'APL', 'en'),
    (2, 'Banana', 'BAN', 'en'),
    (3, 'cherry ', 'CHE', 'en'),
    (4, 'Äpfel', 'APF', 'de'),
    (5, 'zebra', 'ZEB', 'en'),
    (6, '', 'E', NULL),
    (7, NULL, NULL, 'xx'),
    (8, 'banana', 'BAN', 'en'),
    (9, 'naïve café', 'NAI', 'fr'),
    (10, 'O''Brien', 'OB', 'en');

INSERT INTO tree (id, parent_id, label) VALUES
    (1, NULL, 'root'),
    (2, 1, 'usr'),
    (3, 1, 'etc'),
    (4, 2, 'bin'),
    (5, 2, 'lib'),
    (6, 4, 'local'),
    (7, 3, 'ssl'),
    (8, NULL, 'other');

INSERT INTO flags VALUES (1, true, true), (2, true, false), (3, false, NULL), (4, NULL, NULL), (5, false, false);

INSERT INTO ledger (id, amount, currency) VALUES
    (1, 1234.5678, 'EUR'),
    (2, -0.0001, 'USD'),
    (3, 999999999999999.9999, 'NOK'),
    (4, 0, 'EUR'),
    (5, 100.10, 'USD');

INSERT INTO tagged VALUES (1, 'red'), (1, 'blue'), (2, 'red'), (3, 'green'), (3, 'red'), (3, 'blue');

-- feature: insert: defaults
INSERT INTO ledger (id, amount) VALUES (6, 42);

INSERT INTO ledger VALUES (7, 7.5, DEFAULT);

INSERT INTO counter (name) VALUES ('zero');

-- feature: insert: serial keys
INSERT INTO customer (name, city, signup) VALUES ('Acme', 'Oslo', '2020-01-15');

INSERT INTO customer (name, city, signup, vip) VALUES
    ('Globex', 'Lyon', '2019-05-20', true),
    ('Initech', NULL, '2021-07-07', false),
    ('Umbrella', 'Oslo', NULL, DEFAULT);

-- feature: insert: returning
INSERT INTO customer (name, city, signup) VALUES ('Hooli', 'Palo Alto', '2022-02-02') RETURNING id;

INSERT INTO customer (name, city) VALUES ('Vehement', 'Oslo'), ('Massive', 'Lyon') RETURNING id, name, vip;

INSERT INTO kv (k, v, note) VALUES ('alpha', 1, 'first') RETURNING *;

INSERT INTO kv (k, v) VALUES ('beta', 2) RETURNING v * 10 AS tenfold, upper(k) AS big;

-- feature: insert: identity keys
INSERT INTO orders (customer_id, placed, status, note) VALUES
    (1, '2023-01-05 10:00:00', 'paid', NULL),
    (1, '2023-01-20 15:30:00', 'shipped', 'fragile'),
    (2, '2023-02-01 08:00:00', 'paid', NULL),
    (3, '2023-02-14 12:00:00', 'cancelled', 'customer changed mind'),
    (2, '2023-03-03 09:15:00', 'new', NULL),
    (5, '2023-03-10 17:45:30', 'shipped', NULL),
    (6, '2023-03-10 17:45:30', 'paid', 'same time as another'),
    (1, '2023-04-01 00:00:00', 'new', NULL);

INSERT INTO orders (customer_id, placed) VALUES (3, '2023-04-02 09:30:00') RETURNING id, status;

INSERT INTO order_line (order_id, line_no, sku, qty, unit_price) VALUES
    (1, 1, 'A-100', 2, 9.99),
    (1, 2, 'B-300', 1, 24.50),
    (2, 1, 'D-500', 1, 99.95),
    (3, 1, 'A-100', 10, 9.50),
    (3, 2, 'A-200', 1, 19.99),
    (3, 3, 'C-400', 4, 5.00),
    (4, 1, 'E-600', 100, 0.10),
    (5, 1, 'C-410', 3, 7.50),
    (6, 1, 'B-310', 2, 12.00),
    (6, 2, 'A-100', 1, 9.99),
    (7, 1, 'D-500', 2, 95.00),
    (8, 1, 'A-200', 5, 18.00),
    (9, 1, 'C-400', 1, 5.00);

-- feature: insert: timestamptz, json, bytea, uuid
INSERT INTO event (at, kind, payload, body, ref) VALUES
    ('2024-01-01 12:00:00+00', 'login', '{"user": "ada", "ok": true}', '\xdeadbeef', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),
    ('2024-02-29 23:59:59.123456+00', 'upload', '{"size": 1024, "parts": [1, 2, 3]}', 'hello', 'B1FFCD00-0D1C-4EF8-BB6D-6BB9BD380A22'),
    ('2024-03-31 01:30:00+02', 'logout', NULL, '', NULL),
    ('2023-12-31 23:00:00-05', 'login', '{"user": "ken"}', NULL, 'c2ddbe11-1e2d-4ef8-8b6d-6bb9bd380a33');

INSERT INTO event (at, kind, body) VALUES ('2024-05-05 05:05:05.5+00', 'blob', decode('00ff10', 'hex')) RETURNING id, kind;

-- feature: insert: select
INSERT INTO kv (k, v) SELECT 'emp' || id, id * 10 FROM emp WHERE id <= 3;

INSERT INTO kv (k, v, note) SELECT 'd-' || lower(name), id, name FROM dept WHERE budget IS NOT NULL ORDER BY id LIMIT 2;

INSERT INTO counter (name, n) SELECT 'dept-' || id, 0 FROM dept;

-- feature: insert: upsert do nothing
INSERT INTO kv (k, v) VALUES ('emp1', 999) ON CONFLICT DO NOTHING;

INSERT INTO kv (k, v) VALUES ('emp1', 999) ON CONFLICT (k) DO NOTHING;

INSERT INTO kv (k, v) VALUES ('new1', 1), ('emp2', 2) ON CONFLICT (k) DO NOTHING RETURNING k;

INSERT INTO tagged VALUES (1, 'red'), (4, 'red') ON CONFLICT DO NOTHING;

-- feature: insert: upsert do update
INSERT INTO counter (name, n) VALUES ('hits', 1)
    ON CONFLICT (name) DO UPDATE SET n = counter.n + excluded.n, touched = counter.touched + 1;

INSERT INTO counter (name, n) VALUES ('hits', 1)
    ON CONFLICT (name) DO UPDATE SET n = counter.n + excluded.n, touched = counter.touched + 1;

INSERT INTO counter (name, n) VALUES ('hits', 5)
    ON CONFLICT (name) DO UPDATE SET n = counter.n + excluded.n RETURNING name, n, touched;

INSERT INTO counter (name, n) VALUES ('hits', 3)
    ON CONFLICT (name) DO UPDATE SET n = excluded.n WHERE counter.n < excluded.n;

INSERT INTO counter (name, n) VALUES ('a', 1), ('b', 2), ('hits', 10)
    ON CONFLICT (name) DO UPDATE SET n = counter.n + excluded.n;

INSERT INTO counter AS c (name, n) VALUES ('b', 100)
    ON CONFLICT ON CONSTRAINT counter_pkey DO UPDATE SET n = c.n * 2 RETURNING c.n;

INSERT INTO kv (k, v, note) VALUES ('alpha', 11, 'second')
    ON CONFLICT (k) DO UPDATE SET v = excluded.v, note = kv.note || '+' || excluded.note RETURNING k, v, note;

-- feature: insert: extended protocol parameters
-- params: 'p1', 10
INSERT INTO kv (k, v) VALUES ($1, $2);

-- params: 'p2', NULL
INSERT INTO kv (k, v) VALUES ($1, $2) RETURNING k, v;

-- params: 'p3', 30, 'with ''quote'''
INSERT INTO kv (k, v, note) VALUES ($1, $2, $3);

-- params: 'hits', 1
INSERT INTO counter (name, n) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET n = counter.n + excluded.n RETURNING n;
