/**
 * The crash harness (see README.md): `node dist/crash.js [--source kafka|pulsar] --kills N
 * [--records M] [--seed S] [--partitions P] [--keep] [--verbose]`. Progress
 * goes to stderr; stdout gets exactly one JSON line, and the exit status is
 * non-zero when the audit found a lost record or a state that would lose one.
 */
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseCrashArgs } from './crash-args.js';
import { findings } from './crash-report.js';
import { runCrash } from './crash-run.js';

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function main(): Promise<number> {
  const args = parseCrashArgs(process.argv.slice(2), randomInt(0, 2 ** 31));
  const started = Date.now();
  try {
    const report = await runCrash({
      ...args,
      childScript: fileURLToPath(new URL('./child.js', import.meta.url)),
      log,
    });
    process.stdout.write(`${JSON.stringify(report)}\n`);
    const found = findings(report);
    if (found.length > 0) log(`harness: FAILED: ${found.join(', ')} (seed ${args.seed})`);
    return found.length > 0 ? 1 : 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(`harness: could not complete the run (seed ${args.seed}): ${message}`);
    process.stdout.write(
      `${JSON.stringify({
        harness: 'crash',
        error: message,
        seed: args.seed,
        elapsed_s: Math.round((Date.now() - started) / 100) / 10,
      })}\n`,
    );
    return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`harness: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);
