-- Cross-engine SQL corpus: built-in functions and casts.

-- feature: string functions
SELECT lower(name), upper(name) FROM emp ORDER BY id;

SELECT name, length(name) FROM emp ORDER BY id;

SELECT id, char_length(w), octet_length(w) FROM words ORDER BY id;

SELECT substr(name, 2, 3), substring(name FROM 1 FOR 2), substring(name, 3) FROM emp ORDER BY id;

SELECT name, position('a' IN name), strpos(name, 'a') FROM emp ORDER BY id;

SELECT trim('  padded  '), ltrim('xxabcxx', 'x'), rtrim('xxabcxx', 'x'), trim(both 'x' FROM 'xxabcxx');

SELECT id, '[' || trim(w) || ']' FROM words WHERE w IS NOT NULL ORDER BY id;

SELECT id, replace(w, 'a', 'A') FROM words ORDER BY id;

SELECT concat(name, '-', grade), concat_ws('/', name, dept_id, grade) FROM emp ORDER BY id;

SELECT name || ' (' || dept_id || ')' FROM emp ORDER BY id;

SELECT 'abc' || 42, 'a' || NULL, 1 || 'x';

SELECT lpad(name, 8, '*'), rpad(name, 8, '.'), lpad(name, 2) FROM emp ORDER BY id;

SELECT left(name, 2), right(name, 2), left(name, -1) FROM emp ORDER BY id;

SELECT reverse('shepherd'), repeat('ab', 3), initcap('hello wORLD');

SELECT id, initcap(name), initcap(lower(name) || ' mc-donald_x 2nd éa'), initcap(NULL) FROM emp ORDER BY id;

SELECT split_part('a,b,c', ',', 2), split_part('a,b,c', ',', 5);

SELECT md5('shepherd');

SELECT ascii('A'), chr(66);

SELECT translate('hello', 'el', 'ip');

SELECT format('%s has grade %s', name, grade) FROM emp WHERE id = 1;

SELECT name FROM emp WHERE lower(name) LIKE '%a%' ORDER BY name;

SELECT sku || '|', length(sku), octet_length(sku) FROM product ORDER BY sku;

SELECT code || '|', length(code) FROM words ORDER BY id;

SELECT regexp_replace('a1b22c333', '[0-9]+', '#', 'g');

SELECT name FROM emp WHERE name ~ '^[A-D]' ORDER BY name;

SELECT starts_with(name, 'A'), name LIKE '_u' FROM emp ORDER BY id;

SELECT upper('naïve café'), lower('ÄPFEL'), length('naïve café');

SELECT lpad('abc', -1, 'x'), lpad('abc', 5, ''), rpad(NULL, 3, 'x'), lpad('héé', 5, 'é'), left('héllo', -2), right('héllo', -2);

SELECT split_part('a,b,c', ',', -1), split_part('a,,c', ',', 2), split_part('a,b', ',', 3), split_part(NULL, ',', 1), split_part(name, 'a', 2) FROM emp ORDER BY id;

SELECT ascii('é'), ascii(''), chr(233), starts_with('abc', ''), starts_with(NULL, 'a'), reverse('héllo'), repeat('ab', -1);

SELECT format('%s-%s-%1$s', 'a', NULL), format('100%%'), format('%s', id) FROM dept ORDER BY id;

SELECT name, name ~* '^a', name !~ 'e', name !~* 'E' FROM emp ORDER BY id;

SELECT regexp_replace(name, '[aeiou]+', '_', 'gi'), substring(name from '[a-z]+'), substring(name from 'x') FROM emp ORDER BY id;

SELECT translate(name, 'ae', 'AE'), md5(name) FROM emp ORDER BY id;

SELECT id, octet_length(code), code || '|' FROM words ORDER BY id;

-- error: 22023
SELECT split_part('a,b', ',', 0);

-- error: 54000
SELECT chr(0);

-- error: 22023
SELECT regexp_replace('a', 'a', 'b', 'z');

-- feature: numeric functions
SELECT round(2.5), round(-2.5), round(2.345, 2), round(1234.5678, -2);

SELECT round(2.5::double precision), round(3.5::double precision), round(-0.5::double precision);

SELECT abs(-7), abs(-7.25), ceil(4.1), ceil(-4.1), floor(4.9), floor(-4.9), ceiling(1.2);

SELECT mod(7, 3), mod(-7, 3), 7 % -3, -7 % 3, mod(7.5, 2);

SELECT trunc(4.567, 2), trunc(-4.567), sign(-3), sign(0), sign(2.5);

SELECT power(2, 10), sqrt(16), exp(0), ln(1), log(100);

-- feature: functions typed by PostgreSQL's catalogue (ceil, round, floor of an integer are double precision)
SELECT id, ceil(dept_id) / 2, ceil(dept_id) / 3, round(grade) / 4, floor(id) / 7, mod(id, 2::bigint) / 2 FROM emp ORDER BY id;

SELECT id, ntile(3) OVER (ORDER BY id) / 2, date_part('day', hired) / 2, id / ceil(dept_id) FROM emp ORDER BY id;

SELECT id, sqrt(salary) * 0 + 1, sign(bonus) FROM emp ORDER BY id;

SELECT 0.1 + 0.2, 0.1::float8 + 0.2::float8, 1e3::float8, 1.5e-3;

SELECT pi(), greatest(1.5, 2), least(-1, 0);

SELECT id, round(x, 1), round(x), x * 2 FROM nums ORDER BY id;

SELECT id, f, r FROM nums ORDER BY id;

SELECT big * 2 FROM nums WHERE id IN (1, 2, 4, 5) ORDER BY id;

SELECT id, abs(a), a * a FROM nums WHERE a IS NOT NULL AND id <> 7 ORDER BY id;

SELECT id, round(f), trunc(x, 1), trunc(x, -1), round(x, -1), mod(x, 0.7), x % 2, round(r) FROM nums ORDER BY id;

SELECT round(0.5::float8), round(1.5::float8), round(-1.5::float8), round(-2.5::float8), round(-1250, -2);

SELECT mod(-7.5, 2), -7.5 % 2, mod(7.5, -2), 7.25 % 0.5, mod(10, 2.5), trunc(1234.5678, -2), trunc(4.5, 3);

SELECT salary % 7, mod(salary, 1000.5), trunc(salary, -3), round(salary, -2) FROM emp ORDER BY id;

-- error: 22012
SELECT mod(7.5, 0);

SELECT '0.1'::real + 1, 0.1::real * 3, 1.1::real::float8, (-2.5)::real::double precision;

-- feature: integer division
SELECT 7 / 2, -7 / 2, 7 / -2, 1 / 3;

SELECT 7.0 / 2, 7 / 2.0, 10::numeric / 4, 10::float8 / 4;

SELECT id, a / b, a % b FROM nums WHERE b <> 0 ORDER BY id;

SELECT sum(a) / count(a), sum(a) % count(a) FROM nums;

SELECT 1 / 3.0, 2.0 / 3;

SELECT salary / 3 FROM emp WHERE id = 1;

SELECT count(*) / 5, count(*) * 100 / 7 FROM emp;

SELECT id, salary / 7, salary / id, -salary / 3 FROM emp ORDER BY id;

SELECT id, x / 0.5, a / 2.5, x / 3 FROM nums ORDER BY id;

SELECT dept_id, sum(salary) / 3, sum(salary) / count(*) FROM emp GROUP BY dept_id ORDER BY dept_id;

SELECT NULLIF(1, 2.5), COALESCE(1, 2.0), CASE WHEN false THEN 1 ELSE 2.5 END, GREATEST(1, 2.5), NULLIF(2, 2.0);

SELECT NULLIF(1, 2.5) / 2, NULLIF(2, 2.0) / 2, 7 / NULLIF(2.5, 0), 7 / NULLIF(0.0, 0);

SELECT id, NULLIF(x, 0) / 3, a / NULLIF(x, 0) FROM nums ORDER BY id;

SELECT - CAST(-15 AS INTEGER), - -15, 7 / NULLIF(0, 0), 7 % NULLIF(0, 0);

SELECT id, 20 + CAST(600000 AS DECIMAL) / -32, x * (30000 / 1.5), a + 10000 * 31 / -CAST(5 AS DECIMAL) FROM nums ORDER BY id;

SELECT id, x / a * CAST(NULL AS INTEGER), (x / a) IS NULL, NULL BETWEEN a / x AND b FROM nums WHERE a <> 0 ORDER BY id;

SELECT count(x / NULLIF(a, 0)), count(a / 3.0 + b), -sum(CAST(NULL AS DECIMAL)), avg(CAST(NULL AS INTEGER)) / 7 FROM nums;

-- feature: casts
SELECT '42'::int, CAST('42' AS bigint), '3.14'::numeric(5,2), CAST(3.14159 AS numeric(4,2));

SELECT 3.7::int, (-3.5)::int, 2.5::int, 3.5::integer;

SELECT 42::text, 42::varchar, 'abc'::char(5) || '|', 3::float8;

SELECT '2024-02-29'::date, '2024-02-29 13:45:00'::timestamp, CAST('2024-02-29' AS timestamp);

SELECT 'true'::boolean, 't'::boolean, 'no'::boolean, 1::boolean, true::int;

SELECT true::text, false::text, NULL::boolean::text, (1 < 2)::text || 'x', CAST(active AS varchar) FROM emp ORDER BY id;

SELECT '0.1'::real, '0.1'::double precision, 0.1::real::double precision;

SELECT CAST(salary AS integer), salary::text, CAST(salary AS varchar) FROM emp ORDER BY id;

SELECT CAST(hired AS text), to_char(hired, 'YYYY-MM-DD'), to_char(hired, 'DD Mon YYYY') FROM emp ORDER BY id;

SELECT '123'::int + 1, '1e3'::float8::int, '  7 '::int;

SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, CAST(1 AS numeric(10,2));

SELECT id::text || '#', CAST(id AS char(4)) || '#' FROM dept ORDER BY id;

SELECT CAST(x AS double precision), CAST(f AS numeric(20,5)) FROM nums WHERE id IN (1, 2, 3) ORDER BY id;

-- feature: date and time functions
SELECT extract(year FROM hired), extract(month FROM hired), extract(day FROM hired) FROM emp ORDER BY id;

SELECT extract(dow FROM DATE '2024-03-01'), extract(doy FROM DATE '2024-03-01'), extract(epoch FROM TIMESTAMP '2024-01-01 00:00:00');

SELECT date_part('hour', TIMESTAMP '2024-05-06 07:08:09'), date_part('minute', TIMESTAMP '2024-05-06 07:08:09');

SELECT date_trunc('month', TIMESTAMP '2024-05-17 13:14:15'), date_trunc('day', TIMESTAMP '2024-05-17 13:14:15'),
    date_trunc('year', TIMESTAMP '2024-05-17 13:14:15'), date_trunc('hour', TIMESTAMP '2024-05-17 13:14:15');

SELECT date_trunc('month', hired)::date, count(*) FROM emp GROUP BY 1 ORDER BY 1;

SELECT DATE '2024-01-31' + 1, DATE '2024-03-01' - 1, DATE '2024-03-01' - DATE '2024-02-01';

SELECT DATE '2024-01-31' + INTERVAL '1 month', DATE '2023-01-31' + INTERVAL '1 month';

SELECT TIMESTAMP '2024-01-01 10:00:00' + INTERVAL '90 minutes', TIMESTAMP '2024-03-01 00:00:00' - INTERVAL '1 day';

SELECT TIMESTAMP '2024-03-01 12:00:00' - TIMESTAMP '2024-02-28 06:30:00';

SELECT age(TIMESTAMP '2024-03-01', TIMESTAMP '2023-01-15');

SELECT name, hired FROM emp WHERE hired >= DATE '2020-01-01' ORDER BY hired, name;

SELECT name FROM emp WHERE hired + INTERVAL '10 years' < DATE '2026-01-01' ORDER BY name;

SELECT make_date(2024, 2, 29), DATE '2024-12-31' - DATE '2024-01-01';

SELECT id, at FROM event ORDER BY id;

SELECT id, at AT TIME ZONE 'UTC' FROM event ORDER BY id;

SELECT id, extract(hour FROM at), to_char(at, 'YYYY-MM-DD HH24:MI:SS') FROM event ORDER BY id;

SELECT id, extract(epoch FROM at) FROM event ORDER BY id;

SELECT CAST(TIMESTAMP '2024-05-06 07:08:09.5' AS date), CAST(DATE '2024-05-06' AS timestamp);

SELECT TIMESTAMPTZ '2024-06-01 12:00:00+02', TIMESTAMP '2024-06-01 12:00:00.123456';

SELECT INTERVAL '1 day' * 3, INTERVAL '2 hours' + INTERVAL '30 minutes';

SELECT placed, placed::date, placed + INTERVAL '1 day' FROM orders ORDER BY id;

SELECT INTERVAL '1 year 2 months' + INTERVAL '3 days', INTERVAL '1 day' - INTERVAL '26 hours', INTERVAL '90 minutes' * 2, -INTERVAL '1 week';

SELECT id, placed - TIMESTAMP '2023-01-01 00:00:00' FROM orders ORDER BY id;

SELECT id, at - TIMESTAMPTZ '2024-01-01 00:00:00+00', extract(epoch FROM at), date_part('dow', at) FROM event ORDER BY id;

SELECT id FROM event WHERE at AT TIME ZONE 'UTC' >= TIMESTAMP '2024-02-01' ORDER BY id;

SELECT id FROM event WHERE at - TIMESTAMPTZ '2024-01-01 00:00:00+00' > INTERVAL '30 days' ORDER BY id;

SELECT id, TIMESTAMPTZ '2024-03-01 00:00:00+00' - at <= INTERVAL '1 month 1 hour', INTERVAL '1 day' = at - at FROM event ORDER BY id;

SELECT id, at - TIMESTAMPTZ '2024-01-01 00:00:00+00' AS since FROM event ORDER BY since;

SELECT extract(isodow FROM DATE '2024-03-03'), extract(week FROM DATE '2024-01-01'), extract(quarter FROM DATE '2024-05-01'), extract(second FROM TIMESTAMP '2024-01-01 00:00:09.25');

SELECT age(TIMESTAMP '2024-01-31', TIMESTAMP '2024-03-01'), age(TIMESTAMP '2024-03-31 10:00:00', TIMESTAMP '2024-02-29 12:30:00');

SELECT id, date_trunc('day', at), extract(doy FROM at) FROM event ORDER BY id;

SELECT now() AT TIME ZONE 'UTC' > TIMESTAMP '2020-01-01', extract(epoch FROM now() - TIMESTAMPTZ '2020-01-01 00:00:00+00') > 0, now() - INTERVAL '1 day' < now();

SELECT id, date_trunc('week', at), date_trunc('quarter', at), date_trunc('week', DATE '2024-03-03'), date_trunc('quarter', TIMESTAMP '2024-12-31 23:00:00') FROM event ORDER BY id;

SELECT id, extract(epoch FROM at - TIMESTAMPTZ '2024-01-01 00:00:00.25+00'), date_part('epoch', TIMESTAMP '2024-03-01' - TIMESTAMP '2024-02-01 12:00:00') FROM event ORDER BY id;

SELECT id, at + INTERVAL '1 month 2 days 03:04:05.5', at - INTERVAL '1 year', DATE '2024-01-31' + INTERVAL '1 month 1 day' FROM event ORDER BY id;

SELECT id, at - TIMESTAMPTZ '2024-02-29 23:59:59.5+00', TIMESTAMPTZ '2024-01-01 12:00:00+00' - at FROM event ORDER BY id;

SELECT id, to_char(at, 'DD Mon YYYY, HH12:MI:SS AM'), to_char(at, 'YYYY-MM-DD"T"HH24:MI:SS.US'), to_char(at::date, 'YY/MM/DD DDD') FROM event ORDER BY id;

SELECT count(*) FROM orders WHERE placed BETWEEN '2023-02-01' AND '2023-03-10 17:45:30';

-- feature: json, bytea, uuid values
SELECT id, payload FROM event ORDER BY id;

SELECT id, payload->>'user', payload->'parts' FROM event ORDER BY id;

SELECT id, body, length(body), encode(body, 'hex') FROM event ORDER BY id;

SELECT id FROM event WHERE ref = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';

SELECT id, ref, upper(ref::text) FROM event ORDER BY id;

SELECT id FROM event WHERE ref = 'b1ffcd00-0d1c-4ef8-bb6d-6bb9bd380a22';

SELECT '{"a": [1, 2]}'::json, '\x0102'::bytea, decode('414243', 'hex');

SELECT id, payload->'user', payload->>'size', payload->'parts'->1, payload#>>'{user}' FROM event ORDER BY id;

SELECT id, kind FROM event WHERE payload->>'user' = 'ada' ORDER BY id;

SELECT '{"t": true, "n": null, "x": 1.50, "s": "a\"b\u00e9", "e": 1E+2}'::json->>'t', '{"n": null}'::json->>'n', '{"n": null}'::json->'n',
    '{"x": 1.50}'::json->>'x', '{"s": "a\"b\u00e9"}'::json->>'s', '{"e": 1E+2}'::json->>'e', '[10, "b", [1]]'::json->>1, '{"0": 1}'::json->0;

SELECT id, payload->'parts'->>0, (payload->>'size')::int + 1 FROM event WHERE payload->>'size' IS NOT NULL ORDER BY id;

SELECT count(*) FROM event WHERE payload::jsonb @> '{}';

SELECT id, jsonb_build_object('kind', kind, 'id', id, 'ok', id > 2, 'none', NULL, 'text', 'a"b\c' || E'\n\t') FROM event ORDER BY id;

SELECT jsonb_build_object('b', 1, 'a', 2, 'b', 3), jsonb_build_object(), jsonb_build_object('x', 'y') -> 'x';

SELECT count(*) FROM event WHERE payload::jsonb @> '{"user": "ken"}';

SELECT id, payload::jsonb @> '{"ok": true}', payload::jsonb @> '{"size": 1024.0}' FROM event ORDER BY id;

SELECT '{"b": {"c": [1, 2]}, "a": null}'::jsonb->'b', '{"b": {"c": [1, 2]}}'::jsonb #>> '{b,c}', '{"b": {"c": "x"}}'::jsonb #>> '{b,c}';

SELECT '{"a": 1}'::jsonb ? 'a', '["x", "y"]'::jsonb ? 'y', '{"b": {"c": [1, 2]}}'::jsonb #>> '{b,c,1}';

SELECT id, payload::jsonb -> 'user' = '"ada"'::jsonb, payload::jsonb -> 'size' = '1024.0', payload::jsonb = '{"user": "ada", "ok": true}'::jsonb, payload::jsonb -> 'parts' <> '[1, 2, 3]', payload::jsonb -> 'ok' = 'true' FROM event ORDER BY id;

SELECT id FROM event WHERE payload::jsonb -> 'user' = '"ken"' ORDER BY id;

SELECT id, payload::jsonb -> 'user' IN ('"ada"'::jsonb, '"ken"'::jsonb), payload::jsonb -> 'size' NOT IN ('1024.00', '"x"') FROM event ORDER BY id;

SELECT id, payload::jsonb -> 'size' > '1000'::jsonb, payload::jsonb -> 'user' < '"b"', payload::jsonb -> 'parts' >= 'true' FROM event ORDER BY id;

SELECT '{"a": 1, "b": [1.0, "x"]}'::jsonb = '{"b": [1, "x"], "a": 1.00}'::jsonb, '[1, 2]'::jsonb = '[2, 1]'::jsonb, '"\u0062"'::jsonb = '"b"', '{"a": 1, "a": 2}'::jsonb = '{"a": 2}';

CREATE TABLE jdoc (id int PRIMARY KEY, doc jsonb);

INSERT INTO jdoc VALUES (1, '{"a":1,"a":2}'), (2, '{"k":"\u0041"}'), (3, '{ "b" : [1.0, 1e2], "a": -0 }');

SELECT id FROM jdoc WHERE doc = '{"a":1}'::jsonb OR doc = '{"a":2}' ORDER BY id;

UPDATE jdoc SET doc = '{"k": "B", "k": "C"}' WHERE doc = '{"k":"A"}'::jsonb;

SELECT id, doc, doc::text FROM jdoc ORDER BY id;

UPDATE jdoc SET doc = jsonb_build_object('a', id);
