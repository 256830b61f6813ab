import { Column, DataSource, Entity } from 'typeorm';
import { GeneratedId, IdPrecisionLossError } from '../../../lib/typeorm.js';
import { bootApp } from './support/app.js';
import { describeWhenReachable, POSTGRES, postgresReachable, uniqueSuffix } from '../../support/databases.js';

// A file of its own: TypeORM applies `parseInt8` to pg's process-wide defaults, which would leak into other suites.
describeWhenReachable(await postgresReachable(), 'PostgreSQL', `${POSTGRES.host}:${POSTGRES.port}`, () => {
  describe('PostgreSQL with parseInt8', () => {
    const suffix = uniqueSuffix();

    @Entity(`sf_invoice_${suffix}`)
    class Invoice {
      @GeneratedId()
      id!: bigint;

      @Column({ type: 'int' })
      total!: number;
    }

    afterAll(async () => {
      // The synchronize that ran before the probe created the table.
      const cleanup = await new DataSource({ type: 'postgres', ...POSTGRES }).initialize();
      await cleanup.query(`DROP TABLE IF EXISTS "sf_invoice_${suffix}"`);
      await cleanup.destroy();
    });

    it('fails the bootstrap with the DataSource name and the fix', async () => {
      const boot = bootApp([
        { type: 'postgres', ...POSTGRES, parseInt8: true, entities: [Invoice], synchronize: true },
      ]);
      await expect(boot).rejects.toThrow(IdPrecisionLossError);
      await expect(boot).rejects.toThrow(
        /DataSource "default" \(postgres\).*9007199254740992.*Remove `parseInt8: true`/,
      );
    });

    it('names a named DataSource', async () => {
      const boot = bootApp([
        { type: 'postgres', ...POSTGRES, entities: [] },
        { name: 'billing', type: 'postgres', ...POSTGRES, parseInt8: true, entities: [Invoice], synchronize: true },
      ]);
      await expect(boot).rejects.toThrow(/DataSource "billing" \(postgres\)/);
    });
  });
});
