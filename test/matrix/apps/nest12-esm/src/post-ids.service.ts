import { Injectable } from '@nestjs/common';
import { IdService } from 'nestjs-snowflake';

/** Injects IdService by its type: that needs decorator metadata in the build and in every test runner. */
@Injectable()
export class PostIds {
  constructor(private readonly ids: IdService) {}

  next(): bigint {
    return this.ids.next();
  }

  issuedAt(id: bigint): number {
    return this.ids.decode(id).timestamp;
  }
}
