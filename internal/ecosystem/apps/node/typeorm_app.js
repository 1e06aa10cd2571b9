// TypeORM (on pg), entities declared with EntitySchema (plain JS):
// synchronize (reads the catalogs, creates tables, FKs, uniques),
// synchronize again, save with relations (INSERT ... DEFAULT), find with
// relations, a transaction, and an update.
'use strict';
require('reflect-metadata');
const { DataSource, EntitySchema } = require('typeorm');
const { url, check, run } = require('./ecoapp');

const Shelf = new EntitySchema({
  name: 'Shelf', tableName: 'shelf',
  columns: {
    id: { type: Number, primary: true, generated: true },
    label: { type: String, unique: true },
    created: { type: 'timestamptz', createDate: true },
  },
  relations: { boxes: { type: 'one-to-many', target: 'Box', inverseSide: 'shelf' } },
});
const Box = new EntitySchema({
  name: 'Box', tableName: 'box',
  uniques: [{ columns: ['shelf', 'code'] }],
  columns: {
    id: { type: Number, primary: true, generated: true },
    code: { type: String },
    weight: { type: 'numeric', precision: 8, scale: 2, default: 0 },
    contents: { type: 'jsonb', nullable: true },
  },
  relations: { shelf: { type: 'many-to-one', target: 'Shelf', inverseSide: 'boxes', nullable: false } },
});

const ds = new DataSource({ type: 'postgres', url, entities: [Shelf, Box], synchronize: false, logging: false });

run([
  ['initialize', () => ds.initialize()],
  ['synchronize', () => ds.synchronize()],
  ['synchronize_again', async () => {
    const log = await ds.driver.createSchemaBuilder().log();
    check(log.upQueries.length === 0, `second synchronize wants: ${log.upQueries.map((q) => q.query).join('; ')}`);
  }],
  ['save', async () => {
    const shelves = ds.getRepository('Shelf');
    const boxes = ds.getRepository('Box');
    const s = await shelves.save({ label: 'A1' });
    await boxes.save([{ code: 'b1', shelf: s, contents: { tools: 3 } }, { code: 'b2', shelf: s, weight: '2.50' }]);
    const found = await shelves.findOne({ where: { label: 'A1' }, relations: { boxes: true } });
    check(found.boxes.length === 2, 'boxes');
    const b1 = found.boxes.find((b) => b.code === 'b1');
    check(b1.weight === '0.00' && b1.contents.tools === 3, `b1 ${JSON.stringify(b1)}`);
  }],
  ['transaction', async () => {
    await ds.transaction(async (m) => {
      const s = await m.save('Shelf', { label: 'B2' });
      await m.save('Box', { code: 'c1', shelf: s, weight: '1.25' });
    });
    await ds.getRepository('Box').update({ code: 'b2' }, { weight: '3.00' });
    const { sum } = await ds.getRepository('Box').createQueryBuilder('b').select('SUM(b.weight)', 'sum').getRawOne();
    check(sum === '4.25', `sum ${sum}`);
  }],
], () => ds.isInitialized && ds.destroy());
