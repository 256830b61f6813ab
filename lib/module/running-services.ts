/**
 * The `IdService`s started in this process and not shut down, for `IdService.current()`: what cannot be injected (a
 * pipe built with `new`) finds the app's service here, by registration name.
 */
import { SnowflakeConfigError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';
import { DEFAULT_GENERATOR_NAME } from './snowflake.tokens.js';

/** What the registry needs of a service: its registration's name and its layout. */
export interface RunningService {
  readonly name: string;
  readonly layout: Layout;
}

/** The running services, in start order. */
export class RunningServices<S extends RunningService> {
  private readonly running = new Set<S>();

  add(service: S): void {
    this.running.add(service);
  }

  delete(service: S): void {
    this.running.delete(service);
  }

  /**
   * The first running service of the registration `name`.
   * @throws SnowflakeConfigError when none runs, or several with different layouts do
   */
  find(name: string): S {
    const [first, ...others] = [...this.running].filter((service) => service.name === name);
    if (first === undefined) {
      const running = [...new Set([...this.running].map((service) => JSON.stringify(service.name)))];
      throw new SnowflakeConfigError(
        'SnowflakeModule',
        name === DEFAULT_GENERATOR_NAME
          ? 'no IdService has started in this process: import SnowflakeModule.forRoot() in the app (the ID pipe and ' +
              'other helpers read the layout from it).' +
              (running.length > 0 ? ` Only named registrations run (${running.join(', ')}): pass \`generator\`.` : '')
          : `no IdService named ${JSON.stringify(name)} has started in this process: register ` +
              `SnowflakeModule.forRoot({ name: ${JSON.stringify(name)}, … }) in the app` +
              (running.length > 0 ? ` (running: ${running.join(', ')}).` : '.'),
      );
    }
    if (others.some((other) => other.layout !== first.layout && !sameLayout(other.layout, first.layout))) {
      throw new SnowflakeConfigError(
        'SnowflakeModule',
        'several IdServices with different layouts run in this process: use the class form of the pipe ' +
          "(`@Param('id', ParseSnowflakeIdPipe)`), which gets the IdService of its module.",
      );
    }
    return first;
  }
}

function sameLayout(a: Layout, b: Layout): boolean {
  return (
    JSON.stringify(a, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)) ===
    JSON.stringify(b, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))
  );
}
