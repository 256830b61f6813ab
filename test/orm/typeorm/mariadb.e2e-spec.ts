import { describeWhenReachable, MARIADB, mariadbReachable } from '../../support/databases.js';
import { generatedIdSuite } from './support/generated-id.suite.js';

describeWhenReachable(await mariadbReachable(), 'MariaDB', `${MARIADB.host}:${MARIADB.port}`, () => {
  describe(`@GeneratedId() on MariaDB (mysql2, ${MARIADB.host}:${MARIADB.port})`, () => {
    generatedIdSuite({
      dataSources: () => ({ default: { type: 'mariadb', ...MARIADB }, named: { type: 'mariadb', ...MARIADB } }),
    });
  });
});
