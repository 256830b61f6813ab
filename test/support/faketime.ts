import { existsSync } from 'node:fs';

/**
 * Where libfaketime (Debian's `faketime` package) lives, or undefined when it is not installed: tests that step a
 * process's wall clock through it say SKIPPED without it. `FAKETIME_LIBRARY` overrides the path, as in the chaos run.
 */
export function faketimeLibrary(): string | undefined {
  const path = process.env.FAKETIME_LIBRARY ?? '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';
  return existsSync(path) ? path : undefined;
}
