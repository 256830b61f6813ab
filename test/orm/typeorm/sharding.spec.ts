import Database from 'better-sqlite3';
import { Column, DataSource, Entity, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { IdService, InvalidShardKeyError, ShardKeyMissingError, shardOfKey } from '../../../lib/index.js';
import { GeneratedId, GeneratedIdTypeError, safeIntegerDriver } from '../../../lib/typeorm.js';
import { sqliteDirectory } from '../../support/databases.js';
import { bootApp } from './support/app.js';

@Entity('shard_customer')
class Customer {
  @GeneratedId()
  id!: bigint;

  @Column()
  name!: string;

  @OneToMany(() => Purchase, (purchase) => purchase.customer, { cascade: true })
  purchases?: Purchase[];
}

@Entity('shard_purchase')
class Purchase {
  @GeneratedId({ shardFrom: 'customerId' })
  id!: bigint;

  @Column({ type: 'bigint' })
  customerId!: bigint;

  @ManyToOne(() => Customer, (customer) => customer.purchases)
  @JoinColumn({ name: 'customerId' })
  customer?: Customer;

  @Column()
  item!: string;
}

/** Shards from a relation alone: its join column's property is the relation's. */
@Entity('shard_review')
class Review {
  @GeneratedId({ shardFrom: 'author' })
  id!: string;

  @ManyToOne(() => Customer, { nullable: false })
  author!: Customer;
}

@Entity('shard_note')
class Note {
  @GeneratedId({ shardFrom: 'tenant' })
  id!: bigint;

  @Column()
  tenant!: string;

  @GeneratedId({ primary: false, name: 'public_id', shardFrom: 'tenant' })
  publicId!: string;
}

@Entity('shard_typo')
class Typo {
  @GeneratedId({ shardFrom: 'userid' })
  id!: bigint;

  @Column({ type: 'bigint' })
  userId!: bigint;
}

const ENTITIES = [Customer, Purchase, Review, Note];

describe("@GeneratedId({ shardFrom }) on SQLite, with the 'sharded' layout", () => {
  const files = sqliteDirectory();
  afterAll(() => files.remove());

  const dataSource = (name: string, entities: unknown[] = ENTITIES) => ({
    type: 'better-sqlite3' as const,
    database: files.path(name),
    driver: safeIntegerDriver(Database),
    entities: entities as never[],
    synchronize: true,
  });

  it('puts every row of a key in the key shard, through save, insert and a relation', async () => {
    const app = await bootApp([dataSource('shards.db')], { workerId: 3, layout: 'sharded' });
    try {
      const ids = app.get(IdService);
      const db = app.get(DataSource);
      const customers = await db.getRepository(Customer).save([{ name: 'Ada' }, { name: 'Grace' }, { name: 'Edsger' }]);
      const purchases = db.getRepository(Purchase);
      for (const customer of customers) {
        const shard = ids.shardOfKey(customer.id);
        const saved = await purchases.save(
          Array.from({ length: 4 }, (_, i) => purchases.create({ customerId: customer.id, item: `item ${i}` })),
        );
        await purchases.insert({ customerId: customer.id, item: 'inserted' });
        const stored = await purchases.findBy({ customerId: customer.id });
        expect(stored).toHaveLength(5);
        expect(stored.map((row) => ids.shardOf(row.id))).toEqual(new Array(5).fill(shard));
        expect(saved.every((row) => row.id % 16n === BigInt(shard))).toBe(true);
        // Only the related entity set: the foreign key column is read through it, `purchase.customer.id`.
        const throughRelation = await purchases.save(purchases.create({ customer, item: 'through the relation' }));
        expect(ids.shardOf(throughRelation.id)).toBe(shard);
        // The relation alone: the key is read through the join column, `review.author.id`.
        const review = await db.getRepository(Review).save({ author: customer });
        expect(ids.shardOf(review.id)).toBe(shard);
        expect(ids.decode(review.id)).toMatchObject({ workerId: 3, shard });
      }
    } finally {
      await app.close();
    }
  });

  it('fills two sharded columns of a row, both in its shard, from a string key', async () => {
    const app = await bootApp([dataSource('notes.db')], { workerId: 4, layout: 'sharded' });
    try {
      const notes = app.get(DataSource).getRepository(Note);
      const note = await notes.save(notes.create({ tenant: 'acme' }));
      const shard = shardOfKey('acme', 4);
      expect(app.get(IdService).shardOf(note.id)).toBe(shard);
      expect(app.get(IdService).shardOf(note.publicId)).toBe(shard);
      expect(note.id).not.toBe(BigInt(note.publicId));
    } finally {
      await app.close();
    }
  });

  it('fails an insert without the key, naming it, instead of filling shard 0', async () => {
    const app = await bootApp([dataSource('missing.db')], { workerId: 5, layout: 'sharded' });
    try {
      const db = app.get(DataSource);
      const purchases = db.getRepository(Purchase);
      await expect(purchases.save(purchases.create({ item: 'orphan' }))).rejects.toThrow(ShardKeyMissingError);
      await expect(purchases.insert({ item: 'orphan' })).rejects.toThrow(
        /Cannot fill Purchase\.id: its shard comes from `customerId`, which the row does not set/,
      );
      // A child saved through its parent's one-to-many cascade has no foreign key yet when IDs are filled.
      await expect(
        db.getRepository(Customer).save({ name: 'Barbara', purchases: [{ item: 'cascaded' } as Purchase] }),
      ).rejects.toThrow(ShardKeyMissingError);
      await expect(db.getRepository(Note).insert({ tenant: { bad: true } as never })).rejects.toThrow(
        InvalidShardKeyError,
      );
      expect(await purchases.count()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('fails the bootstrap for a shardFrom on a layout without a shard field, or naming no column', async () => {
    await expect(bootApp([dataSource('plain.db')], { workerId: 6 })).rejects.toThrow(GeneratedIdTypeError);
    await expect(bootApp([dataSource('plain2.db')], { workerId: 6 })).rejects.toThrow(
      /@GeneratedId\(\) on Purchase\.id: `shardFrom: 'customerId'` needs a layout with a shard field/,
    );
    await expect(bootApp([dataSource('typo.db', [Typo])], { workerId: 6, layout: 'sharded' })).rejects.toThrow(
      /`shardFrom: 'userid'` names no column of the entity \(columns: id, userId\)/,
    );
  });
});
