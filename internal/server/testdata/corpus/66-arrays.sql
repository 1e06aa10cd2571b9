-- Cross-engine SQL corpus: arrays (text[], integer[], bigint[],
-- boolean[] columns; = ANY; array functions). MariaDB and SQLite keep an
-- array as PostgreSQL's output text of it, written by shepherd.

-- feature: arrays: columns
CREATE TABLE arr_post (
    id integer PRIMARY KEY,
    slug text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    scores integer[],
    big bigint[],
    flags boolean[],
    names varchar[]
);

-- feature: arrays: literals and constructors written as PostgreSQL stores them
INSERT INTO arr_post (id, slug, tags, scores, big, flags, names) VALUES
    (1, 'hello', '{go,sql}', '{3,5,8}', '{9000000000}', '{t,f}', '{ann}'),
    (2, 'quoted', '{"a b","c,d","e\"f","g\\h",""}', '{ 1 , 02 ,+3 }', NULL, '{yes,no,on,off}', '{"x"}'),
    (3, 'nulls', '{NULL,"NULL",null,x}', '{NULL,4}', '{}', '{NULL}', NULL),
    (4, 'ctor', ARRAY['p', 'q r', NULL], ARRAY[10, 20], ARRAY[1, 2]::bigint[], ARRAY[true, false], ARRAY['v']::varchar[]);

INSERT INTO arr_post (id, slug) VALUES (5, 'defaults');

SELECT id, slug, tags, scores, big, flags, names FROM arr_post ORDER BY id;

SELECT '{ 1 , 2 }'::integer[], '{"a"}'::text[], ARRAY['x', 'y z'], ARRAY[1, 2, 3];

-- params: '{"go","sql","x y"}', '{1,2}'
INSERT INTO arr_post (id, slug, tags, scores) VALUES (6, 'params', $1, $2);

-- params: 6
SELECT tags, scores FROM arr_post WHERE id = $1;

-- feature: arrays: errors PostgreSQL gives on input
-- error: 22P02
INSERT INTO arr_post (id, slug, tags) VALUES (7, 'bad', '{a,b');

-- error: 22P02
INSERT INTO arr_post (id, slug, scores) VALUES (7, 'bad', '{1,x}');

-- error: 22003
INSERT INTO arr_post (id, slug, scores) VALUES (7, 'bad', '{99999999999}');

-- error: 22P02
INSERT INTO arr_post (id, slug, tags) VALUES (7, 'bad', 'a,b');

-- feature: arrays: = ANY and <> ALL over array columns and parameters
SELECT id FROM arr_post WHERE 'go' = ANY(tags) ORDER BY id;

SELECT id FROM arr_post WHERE 'c,d' = ANY(tags) ORDER BY id;

SELECT id FROM arr_post WHERE 'e"f' = ANY(tags) OR 'g\h' = ANY(tags) OR '' = ANY(tags) ORDER BY id;

SELECT id FROM arr_post WHERE 'NULL' = ANY(tags) ORDER BY id;

SELECT id, 'zz' = ANY(tags), 4 = ANY(scores), 5 = ANY(scores), true = ANY(flags) FROM arr_post ORDER BY id;

SELECT id, 'zz' <> ALL(tags), 8 <> ALL(scores) FROM arr_post ORDER BY id;

-- params: 'sql'
SELECT count(*) FROM arr_post WHERE $1 = ANY(tags);

-- params: '{1,3,5}'
SELECT id, slug FROM arr_post WHERE id = ANY($1) ORDER BY id;

-- params: '{hello,ctor}'
SELECT id FROM arr_post WHERE slug = ANY($1::text[]) ORDER BY id;

SELECT id FROM arr_post WHERE id = ANY('{2,4}') ORDER BY id;

SELECT id FROM arr_post WHERE id = ANY(ARRAY[1, 2]) ORDER BY id;

-- feature: arrays: comparison and functions
SELECT id FROM arr_post WHERE tags = '{go,sql}' ORDER BY id;

SELECT id FROM arr_post WHERE scores = ARRAY[1, 2, 3] ORDER BY id;

SELECT id, array_length(tags, 1), cardinality(tags), array_length(scores, 1), cardinality(big) FROM arr_post ORDER BY id;

SELECT id FROM arr_post WHERE tags @> ARRAY['go'] ORDER BY id;

SELECT id FROM arr_post WHERE tags && '{x,p}' ORDER BY id;

SELECT id, array_to_string(tags, '|') FROM arr_post ORDER BY id;

SELECT string_to_array('a,b,,c', ','), string_to_array('x y', NULL), string_to_array('', ',');

SELECT tags FROM arr_post ORDER BY tags;

SELECT array_agg(id ORDER BY id) FROM arr_post;

SELECT unnest(scores) FROM arr_post WHERE id = 1;

-- feature: arrays: updates
UPDATE arr_post SET tags = '{ updated , "x" }', scores = ARRAY[7] WHERE id = 5;

-- params: '{"b","a"}', 1
UPDATE arr_post SET tags = $1 WHERE id = $2;

SELECT id, tags, scores FROM arr_post WHERE id IN (1, 5) ORDER BY id;

DELETE FROM arr_post WHERE 'x' = ANY(tags);

SELECT id FROM arr_post ORDER BY id;

-- feature: arrays: array_agg
SELECT array_agg(slug ORDER BY id) FROM arr_post;

SELECT array_agg(id ORDER BY id DESC), array_agg(id ORDER BY id) FILTER (WHERE id > 2) FROM arr_post;

SELECT id % 2, array_agg(CASE WHEN id > 2 THEN slug || ' x' END ORDER BY id) FROM arr_post GROUP BY id % 2 ORDER BY 1;

SELECT array_agg(id > 3 ORDER BY id) FROM arr_post;

SELECT array_agg(id ORDER BY id) FROM arr_post WHERE id < 0;

SELECT array_agg(slug) FROM arr_post;

-- feature: arrays: ALTER TABLE
ALTER TABLE arr_post ADD COLUMN extra integer[] DEFAULT '{ 5 , 6 }';

SELECT id, extra FROM arr_post ORDER BY id;

ALTER TABLE arr_post ALTER COLUMN extra SET DEFAULT '{7}';

INSERT INTO arr_post (id, slug) VALUES (9, 'later');

SELECT id, extra, tags FROM arr_post WHERE id = 9;

SELECT max(scores) FROM arr_post;

-- feature: arrays: unnest of a constant array in FROM
SELECT * FROM unnest(ARRAY[3, 1, 2]) AS u(x) ORDER BY x;

SELECT u, u || '!' FROM unnest('{b,"a c",NULL}'::text[]) AS u ORDER BY u;

SELECT x, n FROM unnest(ARRAY['p', 'q']) WITH ORDINALITY AS t(x, n) ORDER BY n;

SELECT count(*), sum(unnest) FROM unnest('{1,2,3}'::int[]);

SELECT p.id, u.x FROM arr_post p JOIN unnest(ARRAY[1, 2]) AS u(x) ON p.id = u.x ORDER BY 1;

SELECT x FROM unnest(ARRAY[true, NULL, false]) AS v(x) WHERE x IS NOT NULL ORDER BY x;

-- feature: arrays: table rebuilt on SQLite
ALTER TABLE arr_post DROP COLUMN big;

SELECT id, tags, scores, extra FROM arr_post ORDER BY id;

-- feature: arrays: subscripts
SELECT id, tags[1], tags[2], tags[0], tags[99], scores[1] + 1, extra[2] FROM arr_post ORDER BY id;

SELECT id FROM arr_post WHERE scores[1] > 4 OR tags[1] = 'b' ORDER BY id;

SELECT ('{a,"b c"}'::text[])[2], (ARRAY[1, 2, 3])[NULL], ('{t,f}'::boolean[])[2];

-- feature: arrays: order
SELECT id, scores FROM arr_post ORDER BY scores DESC, id;

SELECT id FROM arr_post WHERE scores < '{5}' OR tags >= ARRAY['x'] ORDER BY id;

SELECT min(tags), max(extra) FROM arr_post;
