// Runs electronegativity's scanner programmatically (its CLI hides parse errors when writing a report) and
// prints { checks, errors, issues } as JSON on stdout. Meant to be started with `node --import ./no-network.mjs`.
// Usage: node --import no-network.mjs run-electronegativity.mjs <input dir> <electron version> <report.csv> <runner.js>
// The scanner is not a dependency of the project (its own dependencies pin an old typescript-estree that leaves
// invalid entries in `npm ls`): electronegativity-cache.ts installs it into a cache folder and passes its runner.
import { createRequire } from 'node:module';

const [input, electronVersion, report, runner] = process.argv.slice(2);
// The scanner is CommonJS; loading it through require keeps it on the module loader no-network.mjs patches.
const load = createRequire(import.meta.url);
const run = load(runner);

(async () => {
  const result = await run(
    {
      input,
      output: report,
      isSarif: false,
      customScan: [],
      // Its only job is to download Electron's release list: the pinned version says what we ship.
      excludeFromScan: ['availablesecurityfixesglobalcheck'],
      isRelative: true,
      isVerbose: false,
      electronVersionOverride: electronVersion,
      parserPlugins: [],
    },
    false,
  );
  const issues = result.issues.map((i) => ({
    id: i.id,
    file: i.file,
    line: i.location.line,
    column: i.location.column,
    severity: i.severity.name,
    confidence: i.confidence.name,
    description: i.description,
    sample: i.sample ?? null,
  }));
  process.stdout.write(
    `${JSON.stringify({ checks: result.globalChecks + result.atomicChecks, errors: result.errors, issues })}\n`,
  );
})().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
