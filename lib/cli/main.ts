#!/usr/bin/env node
/**
 * `npx nestjs-snowflake decode|range|leases`: IDs and leases from the command line. Exit codes: 0 done, 1 a command
 * failed (a malformed ID, an unreachable Redis), 2 a usage mistake.
 */
import 'reflect-metadata';
import { SnowflakeError } from '../core/errors.js';
import { describeInput } from '../core/describe-input.js';
import { USAGE, parseCli } from './cli-args.js';
import { UsageError } from './usage.error.js';
import { decode, leases, range, type CommandResult } from './commands.js';

async function main(argv: string[]): Promise<number> {
  try {
    const args = parseCli(argv);
    if (args.help || args.command === '') {
      process.stdout.write(`${USAGE}\n`);
      return args.help ? 0 : 2;
    }
    let result: CommandResult;
    if (args.command === 'decode') result = decode(args);
    else if (args.command === 'range') result = range(args);
    else if (args.command === 'leases') result = await leases(args);
    else throw new UsageError(`unknown command ${describeInput(args.command)}`);
    if (result.output !== '') process.stdout.write(`${result.output}\n`);
    for (const error of result.errors ?? []) process.stderr.write(`nestjs-snowflake: ${error}\n`);
    return (result.errors ?? []).length > 0 ? 1 : 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof SnowflakeError) {
      process.stderr.write(`nestjs-snowflake: ${error.message}\n`);
      if (error instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
      return error instanceof UsageError || error.name === 'SnowflakeConfigError' ? 2 : 1;
    }
    process.stderr.write(`nestjs-snowflake: ${(error as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
