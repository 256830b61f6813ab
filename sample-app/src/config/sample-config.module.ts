import { Global, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { sampleConfig, type SampleConfig } from './sample.config.js';

/** The token of the checked {@link SampleConfig}. */
export const SAMPLE_CONFIG = Symbol('SAMPLE_CONFIG');
/** The token of the sample's database settings (`SampleConfig['database']`). */
export const DATABASE_CONFIG = Symbol('DATABASE_CONFIG');

/** Reads the environment once, at bootstrap, and shares the result. */
@Global()
@Module({
  imports: [ConfigModule.forRoot()],
  providers: [
    { provide: SAMPLE_CONFIG, inject: [ConfigService], useFactory: sampleConfig },
    { provide: DATABASE_CONFIG, inject: [SAMPLE_CONFIG], useFactory: (config: SampleConfig) => config.database },
  ],
  exports: [SAMPLE_CONFIG, DATABASE_CONFIG],
})
export class SampleConfigModule {}
