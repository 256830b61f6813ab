import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { attachIssuers } from './generated-id.attach.js';
import { IdServiceNotFoundError } from './generated-id.errors.js';
import type { IdIssuers } from './generated-id.issuers.js';
import { isDataSourceLike, type DataSourceLike } from './typeorm.structural.js';

/**
 * Injection token of the {@link IdIssuerLookup} that {@link TypeOrmAttacher} takes its IDs from. The entry that
 * declares the module provides it, so that nothing here depends on the Nest module that owns `IdService`.
 *
 * @internal
 */
export const SNOWFLAKE_ID_ISSUER = 'SNOWFLAKE:ID_ISSUER';

/**
 * Finds the app's issuers, every `SnowflakeModule` registration by name, or undefined when the app has none. A
 * function rather than the issuers themselves: it is called when the attacher runs, once every provider of the app
 * exists, and may look across modules.
 *
 * @internal
 */
export type IdIssuerLookup = () => IdIssuers | undefined;

/**
 * Attaches the `@GeneratedId()` subscriber to every TypeORM DataSource of the app, named ones included, so users
 * register nothing beyond `SnowflakeTypeOrmModule` beside `SnowflakeModule` and `TypeOrmModule`. DataSources are
 * found by shape among the app's providers: this file must not import `typeorm`, which is an optional peer.
 *
 * @internal
 */
@Injectable()
export class TypeOrmAttacher implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Snowflake');
  private readonly detachers: Array<() => void> = [];

  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(SNOWFLAKE_ID_ISSUER) private readonly findIssuer: IdIssuerLookup,
  ) {}

  /**
   * Runs when the module initialises: every DataSource provider has been created (and, unless
   * `manualInitialization` is set, initialised) by then. Inserts from `onApplicationBootstrap` hooks get IDs; inserts
   * from `onModuleInit` hooks only in modules that Nest initialises after this one (those importing
   * SnowflakeTypeOrmModule).
   *
   * @throws IdServiceNotFoundError the app registers no SnowflakeModule
   * @throws UnknownGeneratorError a `@GeneratedId({ generator })` names no registration of the app
   */
  async onModuleInit(): Promise<void> {
    const ids = this.findIssuer();
    if (ids === undefined || ids.names().length === 0) throw new IdServiceNotFoundError();
    for (const { dataSource, name } of this.dataSources()) {
      if (!dataSource.isInitialized) {
        this.logger.warn(
          `The TypeORM DataSource "${name}" is not initialised (manualInitialization?), so @GeneratedId() columns ` +
            'are not filled on it. Call attachGeneratedIds(dataSource, idService) after initialize().',
        );
        continue;
      }
      this.detachers.push(await attachIssuers(dataSource, ids, { name, logger: this.logger }));
    }
  }

  /** Takes the subscriber off DataSources that may outlive the app (one passed in through a factory). */
  onApplicationShutdown(): void {
    for (const detach of this.detachers.splice(0)) detach();
  }

  private dataSources(): Array<{ dataSource: DataSourceLike; name: string }> {
    const found = new Map<DataSourceLike, string>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.isDependencyTreeStatic() ? wrapper.instance : undefined;
      if (!isDataSourceLike(instance) || found.has(instance)) continue;
      found.set(instance, dataSourceName(wrapper.token));
    }
    return [...found].map(([dataSource, name]) => ({ dataSource, name }));
  }
}

/** @nestjs/typeorm registers the default DataSource under its class and a named one under `<name>DataSource`. */
function dataSourceName(token: unknown): string {
  return typeof token === 'string' && token.endsWith('DataSource') && token.length > 'DataSource'.length
    ? token.slice(0, -'DataSource'.length)
    : 'default';
}
