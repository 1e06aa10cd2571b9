// postgres.js with default options (it fetches pg_type for its type
// parsers and prepares statements): DDL, tagged-template CRUD, json, a
// transaction with a savepoint, a dynamic multi-row insert.
'use strict';
const postgres = require('postgres');
const { url, check, run } = require('./ecoapp');

const sql = postgres(url, { onnotice: () => {} });

run([
  ['create_schema', async () => {
    await sql`CREATE TABLE city (id serial PRIMARY KEY, name text NOT NULL UNIQUE, pop integer)`;
    await sql`CREATE TABLE street (id serial PRIMARY KEY, city_id integer NOT NULL REFERENCES city(id),
      name text NOT NULL, length_km numeric(6,2), info jsonb, UNIQUE (city_id, name))`;
  }],
  ['crud', async () => {
    const [c] = await sql`INSERT INTO city (name, pop) VALUES (${'Utrecht'}, ${361924}) RETURNING id`;
    await sql`INSERT INTO street (city_id, name, length_km, info) VALUES (${c.id}, ${'Oudegracht'}, ${'2.10'}, ${sql.json({ canal: true })})`;
    const [s] = await sql`SELECT name, length_km, info FROM street WHERE city_id = ${c.id}`;
    check(s.length_km === '2.10' && s.info.canal === true, `street ${JSON.stringify(s)}`);
    const r = await sql`UPDATE city SET pop = pop + 1 WHERE name = ${'Utrecht'}`;
    check(r.count === 1, `update count ${r.count}`);
  }],
  ['multi_row_insert', async () => {
    const rows = Array.from({ length: 20 }, (_, i) => ({ city_id: 1, name: `Straat ${i}`, length_km: `${i}.5` }));
    await sql`INSERT INTO street ${sql(rows, 'city_id', 'name', 'length_km')}`;
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM street`;
    check(n === 21, `streets ${n}`);
  }],
  ['transaction_with_savepoint', async () => {
    await sql.begin(async (tx) => {
      await tx`INSERT INTO city (name) VALUES ('Gouda')`;
      try {
        await tx.savepoint(async (sp) => { await sp`INSERT INTO city (name) VALUES ('Utrecht')`; });
      } catch (e) {
        check(e.code === '23505', `duplicate: ${e.message}`);
      }
    });
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM city`;
    check(n === 2, `cities ${n}`);
  }],
], () => sql.end());
