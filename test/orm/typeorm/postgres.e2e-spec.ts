import { describeWhenReachable, POSTGRES, postgresReachable } from '../../support/databases.js';
import { generatedIdSuite } from './support/generated-id.suite.js';

describeWhenReachable(await postgresReachable(), 'PostgreSQL', `${POSTGRES.host}:${POSTGRES.port}`, () => {
  describe(`@GeneratedId() on PostgreSQL (pg, ${POSTGRES.host}:${POSTGRES.port})`, () => {
    generatedIdSuite({
      dataSources: () => ({ default: { type: 'postgres', ...POSTGRES }, named: { type: 'postgres', ...POSTGRES } }),
    });
  });
});
