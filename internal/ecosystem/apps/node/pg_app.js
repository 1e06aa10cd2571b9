// node-postgres (pg) with default options: a Pool, DDL, parameterized
// CRUD (numeric comes back as a string, jsonb as an object), a
// transaction with a savepoint rolled back after a unique violation, a
// named prepared statement, and the error fields of a foreign key
// violation.
'use strict';
const { Pool } = require('pg');
const { url, check, run } = require('./ecoapp');

const pool = new Pool({ connectionString: url });

run([
  ['create_schema', async () => {
    await pool.query(`CREATE TABLE team (id serial PRIMARY KEY, name text NOT NULL UNIQUE)`);
    await pool.query(`CREATE TABLE player (id serial PRIMARY KEY,
      team_id integer NOT NULL REFERENCES team(id), name text NOT NULL,
      salary numeric(12,2) NOT NULL, stats jsonb, UNIQUE (team_id, name))`);
  }],
  ['crud', async () => {
    const { rows: [t] } = await pool.query('INSERT INTO team (name) VALUES ($1) RETURNING id', ['Ajax']);
    for (const [n, s] of [['Jan', '1000.50'], ['Piet', '2000.25']]) {
      await pool.query('INSERT INTO player (team_id, name, salary, stats) VALUES ($1, $2, $3, $4)',
        [t.id, n, s, { goals: n.length }]);
    }
    const r = await pool.query('UPDATE player SET salary = salary * 2 WHERE name = $1', ['Jan']);
    check(r.rowCount === 1, `update rowCount ${r.rowCount}`);
    const { rows } = await pool.query('SELECT name, salary, stats FROM player ORDER BY name');
    check(rows[0].salary === '2001.00' && rows[1].stats.goals === 4, `rows ${JSON.stringify(rows)}`);
  }],
  ['transaction_with_savepoint', async () => {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await c.query("INSERT INTO team (name) VALUES ('PSV')");
      await c.query('SAVEPOINT sp');
      try {
        await c.query("INSERT INTO team (name) VALUES ('Ajax')");
        throw new Error('duplicate team accepted');
      } catch (e) {
        check(e.code === '23505', `duplicate: ${e.message}`);
        await c.query('ROLLBACK TO SAVEPOINT sp');
      }
      await c.query('COMMIT');
    } finally {
      c.release();
    }
    const { rows: [{ n }] } = await pool.query('SELECT count(*)::int AS n FROM team');
    check(n === 2, `teams ${n}`);
  }],
  ['prepared', async () => {
    for (let i = 0; i < 3; i++) {
      const { rows } = await pool.query({ name: 'by-team', text: 'SELECT count(*)::int AS n FROM player WHERE team_id = $1', values: [1] });
      check(rows[0].n === 2, 'prepared count');
    }
  }],
  ['fk_violation_fields', async () => {
    try {
      await pool.query("INSERT INTO player (team_id, name, salary) VALUES (99, 'x', 1)");
      throw new Error('bad team accepted');
    } catch (e) {
      check(e.code === '23503' && e.constraint === 'player_team_id_fkey' && e.table === 'player',
        `fk error: code ${e.code} constraint ${e.constraint} table ${e.table}: ${e.message}`);
    }
  }],
], () => pool.end());
