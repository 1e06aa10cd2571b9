-- Cross-engine SQL corpus: values a replica would choose differently.
-- shepherd must pin them (DESIGN.md, "Determinism and heterogeneity");
-- only what is stable is compared with PostgreSQL here, and the
-- replicas' final contents are compared with each other by the harness.

-- feature: now() and current_timestamp
INSERT INTO audit (who) VALUES ('default-now');

INSERT INTO audit (who, created) VALUES ('explicit-now', now());

INSERT INTO audit (who, created) VALUES ('current-ts', current_timestamp);

INSERT INTO audit (who, created, day) VALUES ('today', now(), current_date);

SELECT count(*) FROM audit WHERE created <= now();

SELECT count(*) FROM audit WHERE created > TIMESTAMPTZ '2024-01-01 00:00:00+00';

SELECT count(DISTINCT created) FROM audit WHERE who IN ('default-now', 'explicit-now', 'current-ts');

SELECT count(*) FROM audit WHERE day <= current_date;

SELECT now() = current_timestamp, now() >= TIMESTAMPTZ '2024-01-01 00:00:00+00', extract(year FROM now()) >= 2024;

SELECT current_date = CAST(now() AS date), localtimestamp = now()::timestamp;

SELECT count(*) FROM audit WHERE created > now() - INTERVAL '1 hour';

-- compare: count
SELECT now(), current_timestamp, current_date;

BEGIN;

INSERT INTO audit (who) VALUES ('pin-1');

INSERT INTO audit (who) VALUES ('pin-2');

COMMIT;

SELECT count(DISTINCT created), count(*) FROM audit WHERE who LIKE 'pin-%';

UPDATE kv SET note = 'touched at ' || now()::date WHERE k = 'alpha';

SELECT count(*) FROM kv WHERE note LIKE 'touched at 2%';

-- feature: random()
INSERT INTO audit (who, luck) VALUES ('lucky', random());

INSERT INTO audit (who, luck) SELECT 'lucky-' || g, random() FROM generate_series(1, 5) AS g;

SELECT count(*) FROM audit WHERE luck >= 0 AND luck < 1;

SELECT count(DISTINCT luck) FROM audit WHERE who LIKE 'lucky-%';

SELECT random() >= 0, random() < 1;

-- feature: gen_random_uuid()
INSERT INTO audit (who, token) VALUES ('uuid-1', gen_random_uuid()), ('uuid-2', gen_random_uuid());

SELECT count(DISTINCT token) FROM audit WHERE who LIKE 'uuid-%';

SELECT length(token::text) FROM audit WHERE who = 'uuid-1';

INSERT INTO event (at, kind, ref) VALUES (now(), 'uuid', gen_random_uuid());

SELECT count(*) FROM event WHERE ref IS NOT NULL AND kind = 'uuid';

-- feature: serial values
INSERT INTO customer (name, city) VALUES ('Serial One', 'Bergen') RETURNING id;

INSERT INTO customer (name) VALUES ('Serial Two') RETURNING id;

SELECT max(id) - min(id) FROM customer WHERE name LIKE 'Serial%';

BEGIN;

INSERT INTO customer (name) VALUES ('Rolled back') RETURNING id;

ROLLBACK;

INSERT INTO customer (name) VALUES ('After rollback') RETURNING id;

INSERT INTO customer (id, name) VALUES (100, 'Explicit id');

SELECT id, name FROM customer ORDER BY id;

INSERT INTO event (at, kind) VALUES (now(), 'pinned') RETURNING id, kind;

INSERT INTO audit (who) VALUES ('serial-a'), ('serial-b') RETURNING id, who;

-- feature: identity always
INSERT INTO ticket (title) VALUES ('first'), ('second') RETURNING id, title;

-- error: 428C9
INSERT INTO ticket (id, title) VALUES (100, 'forced');

INSERT INTO ticket (title) VALUES ('third') RETURNING id;

INSERT INTO ticket (id, title) OVERRIDING SYSTEM VALUE VALUES (50, 'overridden');

SELECT id, title, opened IS NOT NULL FROM ticket ORDER BY id;

SELECT count(DISTINCT opened) FROM ticket;

-- feature: keys of rows from a query or an array; sequence reset
INSERT INTO ticket (title) SELECT name FROM customer WHERE city = 'Oslo' ORDER BY id RETURNING id, title;

INSERT INTO ticket (title) SELECT * FROM unnest('{x,y,z}'::text[]) RETURNING id, title;

-- params: '{p,q}'
INSERT INTO ticket (title) SELECT * FROM unnest($1::text[]) RETURNING id, title;

SELECT setval(pg_get_serial_sequence('ticket', 'id'), max(id)) FROM ticket;

INSERT INTO ticket (title) VALUES ('after reset') RETURNING id;
