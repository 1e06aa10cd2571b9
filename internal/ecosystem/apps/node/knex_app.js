// knex with the pg client: migrations (written to a temporary directory,
// run with migrate.latest, rolled back and run again: knex keeps its own
// tables and a lock row), the query builder's CRUD with returning, and a
// transaction with a nested one (savepoint).
'use strict';
const fs = require('fs');
const path = require('path');
const knexLib = require('knex');
const { url, check, run } = require('./ecoapp');

const dir = path.join(process.env.WORK_DIR || '.', 'migrations');
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, '20240101000000_init.js'), `
exports.up = (knex) => knex.schema
  .createTable('vendor', (t) => { t.increments('id'); t.string('name', 80).notNullable().unique(); })
  .createTable('invoice', (t) => {
    t.increments('id');
    t.integer('vendor_id').notNullable().references('id').inTable('vendor');
    t.string('number', 20).notNullable();
    t.decimal('amount', 12, 2).notNullable();
    t.jsonb('meta');
    t.timestamps(true, true);
    t.unique(['vendor_id', 'number']);
  });
exports.down = (knex) => knex.schema.dropTable('invoice').dropTable('vendor');
`);
fs.writeFileSync(path.join(dir, '20240102000000_paid.js'), `
exports.up = (knex) => knex.schema.alterTable('invoice', (t) => { t.boolean('paid').notNullable().defaultTo(false); });
exports.down = (knex) => knex.schema.alterTable('invoice', (t) => { t.dropColumn('paid'); });
`);

const knex = knexLib({ client: 'pg', connection: url, migrations: { directory: dir } });

run([
  ['migrate_latest', async () => {
    const [batch, done] = await knex.migrate.latest();
    check(batch === 1 && done.length === 2, `migrations ${done}`);
  }],
  ['rollback_and_again', async () => {
    await knex.migrate.rollback();
    check(!(await knex.schema.hasTable('invoice')), 'invoice after rollback');
    await knex.migrate.latest();
    check(await knex.schema.hasColumn('invoice', 'paid'), 'paid column');
  }],
  ['crud', async () => {
    const [v] = await knex('vendor').insert({ name: 'ACME' }).returning('id');
    await knex('invoice').insert([1, 2, 3].map((i) => ({ vendor_id: v.id, number: `INV-${i}`, amount: `${i}00.10`, meta: { i } })));
    await knex('invoice').where({ number: 'INV-2' }).update({ paid: true });
    const rows = await knex('invoice').where({ paid: false }).orderBy('number');
    check(rows.length === 2 && rows[1].meta.i === 3, `unpaid ${JSON.stringify(rows)}`);
    const [{ sum }] = await knex('invoice').sum('amount');
    check(sum === '600.30', `sum ${sum}`);
  }],
  ['nested_transaction', async () => {
    await knex.transaction(async (trx) => {
      await trx('vendor').insert({ name: 'Initech' });
      try {
        await trx.transaction(async (t2) => { await t2('vendor').insert({ name: 'ACME' }); });
      } catch (e) {
        check(e.code === '23505', `duplicate: ${e.message}`);
      }
    });
    const [{ count }] = await knex('vendor').count();
    check(Number(count) === 2, `vendors ${count}`);
  }],
], () => knex.destroy());
