// Sequelize 6 (on pg): sync (CREATE TABLE with its catalog checks),
// associations, bulkCreate with returning, findOrCreate (in a transaction
// of its own), a managed transaction with a nested one (savepoint), update
// and aggregates, an include (join).
'use strict';
const { Sequelize, DataTypes } = require('sequelize');
const { url, check, run } = require('./ecoapp');

const sequelize = new Sequelize(url, { logging: false });
const Author = sequelize.define('Author', {
  name: { type: DataTypes.STRING(80), allowNull: false, unique: true },
});
const Post = sequelize.define('Post', {
  slug: { type: DataTypes.STRING(40), allowNull: false },
  score: { type: DataTypes.DECIMAL(8, 2), allowNull: false, defaultValue: 0 },
  data: DataTypes.JSONB,
}, { indexes: [{ unique: true, fields: ['AuthorId', 'slug'] }] });
Author.hasMany(Post);
Post.belongsTo(Author);

run([
  ['authenticate', () => sequelize.authenticate()],
  ['sync', async () => {
    await sequelize.sync();
    await sequelize.sync({ alter: true }); // compares with the catalogs
  }],
  ['bulk_create', async () => {
    const authors = await Author.bulkCreate([{ name: 'ann' }, { name: 'ben' }], { returning: true });
    check(authors.every((a) => a.id), 'bulkCreate ids');
    await Post.bulkCreate(authors.flatMap((a) => [1, 2, 3].map((i) => ({ AuthorId: a.id, slug: `p${i}`, score: `${i}.25`, data: { i } }))));
    check(await Post.count() === 6, 'posts');
  }],
  ['find_or_create', async () => {
    const [a, created] = await Author.findOrCreate({ where: { name: 'ann' } });
    check(!created && a.id === 1, 'ann existed');
    const [, created2] = await Author.findOrCreate({ where: { name: 'cat' } });
    check(created2, 'cat created');
  }],
  ['transaction', async () => {
    await sequelize.transaction(async (t) => {
      await Post.update({ score: 9 }, { where: { slug: 'p1' }, transaction: t });
      try {
        await sequelize.transaction({ transaction: t }, async (t2) => {
          await Author.create({ name: 'ben' }, { transaction: t2 });
        });
      } catch (e) {
        check(e.name === 'SequelizeUniqueConstraintError', `duplicate: ${e.name}`);
      }
    });
    const total = await Post.sum('score');
    check(Number(total) === 2 * (9 + 2.25 + 3.25), `total ${total}`);
  }],
  ['include', async () => {
    const a = await Author.findOne({ where: { name: 'ben' }, include: Post, order: [[Post, 'slug', 'ASC']] });
    check(a.Posts.length === 3 && a.Posts[2].data.i === 3, 'include');
  }],
], () => sequelize.close());
