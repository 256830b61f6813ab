import { ClockMovedBackError, SequenceExhaustedError, WorkerUnavailableError } from '../../../lib/index.js';
import { PrismaIdFiller } from '../../../lib/orm/prisma/prisma-id.filler.js';
import { buildIdPlan } from '../../../lib/orm/prisma/prisma-id.plan.js';

/** Pure argument rewriting, without a database: what the extension hands to Prisma. */
describe('PrismaIdFiller', () => {
  const schema = `
    model Doc {
      id       BigInt  @id /// @GeneratedId
      data     Json?
      notes    Note[]
      meta     Meta?
      folderId BigInt?
      folder   Folder? @relation(fields: [folderId], references: [id])
    }
    model Folder {
      id   BigInt @id /// @GeneratedId
      docs Doc[]
    }
    model Note {
      id    String @id /// @GeneratedId
      docId BigInt
      doc   Doc    @relation(fields: [docId], references: [id])
    }
    model Meta {
      id    BigInt @id /// @GeneratedId
      docId BigInt @unique
      doc   Doc    @relation(fields: [docId], references: [id])
      notes String?
    }`;
  const counter = () => {
    let n = 100n;
    return { next: () => ++n };
  };
  const filler = () => new PrismaIdFiller(buildIdPlan({}, { schema }), counter());

  it('copies what it fills and never changes the caller’s objects', async () => {
    const row = { notes: { create: [{}, {}] } };
    const args = { data: [row, row] };
    const out = await filler().fill('Doc', 'createMany', args);
    expect(args).toEqual({ data: [{ notes: { create: [{}, {}] } }, { notes: { create: [{}, {}] } }] });
    expect(out).toEqual({
      data: [
        { id: 101n, notes: { create: [{ id: '102' }, { id: '103' }] } },
        { id: 104n, notes: { create: [{ id: '105' }, { id: '106' }] } },
      ],
    });
  });

  it('tells a to-one `update: { data }` wrapper from update data by the model’s field names', async () => {
    // Meta has no field called `data`, so this is the `{ data }` wrapper and its content is walked.
    const wrapped = await filler().fill('Doc', 'update', {
      where: { id: 1n },
      data: { meta: { update: { data: { doc: { create: {} } } } } },
    });
    expect(wrapped).toEqual({
      where: { id: 1n },
      data: { meta: { update: { data: { doc: { create: { id: 101n } } } } } },
    });

    // Doc has a Json field called `data`: here `{ data: … }` is update data, and a Json value is never walked.
    const json = { notes: { create: {} } };
    const direct = await filler().fill('Meta', 'update', {
      where: { id: 1n },
      data: { doc: { update: { data: json } } },
    });
    expect(direct).toEqual({ where: { id: 1n }, data: { doc: { update: { data: { notes: { create: {} } } } } } });
  });

  it('walks a to-many `update: { where, data }` whatever the related model’s fields, `data Json` among them', async () => {
    const out = await filler().fill('Folder', 'update', {
      where: { id: 1n },
      data: { docs: { update: [{ where: { id: 2n }, data: { notes: { create: [{}] } } }] } },
    });
    expect(out).toEqual({
      where: { id: 1n },
      data: { docs: { update: [{ where: { id: 2n }, data: { notes: { create: [{ id: '101' }] } } }] } },
    });
  });

  it('leaves values that are not plain objects alone: dates, class instances, arrays of scalars', async () => {
    class Skip {}
    const skip = new Skip();
    const date = new Date(0);
    const out = (await filler().fill('Doc', 'create', { data: { id: skip, data: { at: date, list: [1, 2] } } })) as {
      data: { id: unknown; data: { at: unknown } };
    };
    expect(out).toEqual({ data: { id: skip, data: { at: date, list: [1, 2] } } });
    expect(out.data.id).toBe(skip);
    expect(out.data.data.at).toBe(date);
  });

  it('falls back to nextAsync when the sequence is used up or the lease re-claims, and fails when there is none', async () => {
    const plan = buildIdPlan({}, { schema });
    const throwing = (error: Error) => ({
      next: (): bigint => {
        throw error;
      },
      nextAsync: () => Promise.resolve(7n),
    });
    const exhausted = new SequenceExhaustedError(1, 0);
    await expect(
      new PrismaIdFiller(plan, { next: throwing(exhausted).next }).fill('Meta', 'create', { data: {} }),
    ).rejects.toBe(exhausted);
    for (const error of [exhausted, new WorkerUnavailableError('switching', 'switching worker ID')]) {
      await expect(new PrismaIdFiller(plan, throwing(error)).fill('Meta', 'create', { data: {} })).resolves.toEqual({
        data: { id: 7n },
      });
    }
    // A clock gone back beyond the tolerance is not waited for: it fails the query as it fails next().
    const clockBack = new ClockMovedBackError(5000, 1000);
    await expect(new PrismaIdFiller(plan, throwing(clockBack)).fill('Meta', 'create', { data: {} })).rejects.toBe(
      clockBack,
    );
  });
});
