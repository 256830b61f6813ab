export { attachGeneratedIds, type AttachGeneratedIdsOptions } from './orm/typeorm/generated-id.attach.js';
export { GeneratedId } from './orm/typeorm/generated-id.decorator.js';
export {
  DataSourceNotInitializedError,
  GeneratedIdTypeError,
  IdPrecisionLossError,
} from './orm/typeorm/generated-id.errors.js';
export type { GeneratedIdJsType } from './orm/typeorm/generated-id.metadata.js';
export type { GeneratedIdOptions } from './orm/typeorm/generated-id.options.js';
export type { IdIssuer } from './orm/typeorm/generated-id.subscriber.js';
export { safeIntegerDriver } from './orm/typeorm/sqlite.safe-integers.js';
export type { DataSourceLike } from './orm/typeorm/typeorm.structural.js';
