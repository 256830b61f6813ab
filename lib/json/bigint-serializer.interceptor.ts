import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { map, type Observable } from 'rxjs';
import { bigintsToStrings } from './bigint-json.js';

/**
 * Renders every bigint in a response body as a decimal string, so Nest never answers 500 with
 * "Do not know how to serialize a BigInt". Opt in per controller (`@UseInterceptors(BigIntSerializerInterceptor)`)
 * or app-wide (`app.useGlobalInterceptors(new BigIntSerializerInterceptor())`). `BigInt.prototype` is left alone.
 *
 * @publicApi
 */
@Injectable()
export class BigIntSerializerInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((body: unknown) => bigintsToStrings(body)));
  }
}
