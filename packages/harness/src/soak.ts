/**
 * The soak (see README.md): `node dist/soak.js [--records N] ...`. Stdout
 * gets one JSON line per sample and one result line; the exit status is 1
 * when a measure did not stay flat or the secondary did not catch up, 2
 * when the run could not be completed.
 */
import { parseSoakArgs } from './soak-args.js';
import { runSoak } from './soak-run.js';

async function main(): Promise<number> {
  const args = parseSoakArgs(process.argv.slice(2));
  const result = await runSoak({ ...args, emit: (line) => process.stdout.write(`${line}\n`) });
  return result.flat && result.lag_after === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
