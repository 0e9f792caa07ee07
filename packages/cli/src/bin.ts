#!/usr/bin/env node
import { COVERAGE_USAGE, coverageCommand } from './commands/coverage-command.js';
import { CURSOR_USAGE, cursorCommand } from './commands/cursor-command.js';
import { DEMO_USAGE, demoCommand } from './commands/demo-command.js';
import { RAW_USAGE, rawCommand } from './commands/raw-command.js';

const USAGE = `usage:\n  ${DEMO_USAGE}\n\n  ${COVERAGE_USAGE}\n\n  ${RAW_USAGE}\n\n  ${CURSOR_USAGE}`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'demo') return demoCommand(rest);
  if (command === 'coverage') return coverageCommand(rest);
  if (command === 'raw') return rawCommand(rest);
  if (command === 'cursor') return cursorCommand(rest);
  process.stderr.write(`${USAGE}\n`);
  return command === undefined || command === '--help' ? 0 : 2;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`thalweg: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
