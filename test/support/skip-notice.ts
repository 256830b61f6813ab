/**
 * Registers a visibly skipped block for tests that cannot run here (a database not reachable), and says so on
 * stderr: Jest's default reporter drops the console output of a file whose tests are all skipped, stderr still shows.
 */
export function skipVisibly(title: string, what: string, need: string): void {
  process.stderr.write(`\nSKIPPED: ${title}: ${what}\n`);
  describe.skip(`SKIPPED: ${title}`, () => {
    it(need, () => undefined);
  });
}
