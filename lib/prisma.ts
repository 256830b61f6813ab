export type { PrismaDatamodelLike, PrismaFieldLike, PrismaModelLike } from './orm/prisma/prisma-datamodel.js';
export { PrismaIdFieldError, PrismaModelMetadataError } from './orm/prisma/prisma-id.errors.js';
export { snowflakeExtension } from './orm/prisma/snowflake-prisma.extension.js';
export type { SnowflakeIdSource } from './orm/id-issuer.js';
export type { SnowflakePrismaOptions } from './orm/prisma/snowflake-prisma.options.js';
