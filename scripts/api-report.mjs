// The public API as reviewed text: one API Extractor report per package entry, in api/. `npm run api:check` fails
// when an export changed without its report (CI runs it), `npm run api:update` rewrites the reports to commit with
// the change. Reads the built declarations in dist/, so `npm run build` comes first.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = resolve(import.meta.dirname, '..');
const update = process.argv.includes('--update');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const entries = Object.entries(pkg.exports).filter(([, target]) => typeof target === 'object' && target.types);
const scratch = mkdtempSync(join(tmpdir(), 'api-report-'));
const changed = [];
if (update) mkdirSync(join(root, 'api'), { recursive: true });

try {
  for (const [subpath, target] of entries) {
    const name = subpath === '.' ? 'index' : subpath.slice(2);
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: root,
        mainEntryPointFilePath: join(root, target.types),
        compiler: { tsconfigFilePath: join(root, 'tsconfig.build.json') },
        apiReport: {
          enabled: true,
          reportFileName: `${name}.api.md`,
          reportFolder: join(root, 'api'),
          reportTempFolder: scratch,
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          // The report is about which names and signatures are public; TSDoc style is the lint's business.
          tsdocMessageReporting: { default: { logLevel: 'none' } },
          extractorMessageReporting: {
            default: { logLevel: 'none' },
            'ae-missing-release-tag': { logLevel: 'none' },
          },
          compilerMessageReporting: { default: { logLevel: 'warning' } },
        },
      },
      configObjectFullPath: join(root, 'api', `${name}.json`),
      packageJsonFullPath: join(root, 'package.json'),
    });
    const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false, messageCallback: quiet });
    if (result.apiReportChanged) changed.push(`${subpath} (api/${name}.api.md)`);
    if (!result.succeeded && !(result.apiReportChanged && !update))
      throw new Error(`API Extractor failed on ${subpath}`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

function quiet(message) {
  // Progress notes ("Analysis will use…") are not findings; warnings and errors still print.
  if (message.category === 'console' && message.logLevel !== 'warning' && message.logLevel !== 'error') {
    message.handled = true;
  }
}

if (changed.length > 0 && !update) {
  console.error(
    `The public API changed in: ${changed.join(', ')}.\n` +
      'To fix: review the change, run `npm run api:update` and commit the reports in api/ with it.',
  );
  process.exit(1);
}
console.log(
  update ? `API reports written for ${entries.length} entries.` : `API reports match for ${entries.length} entries.`,
);
