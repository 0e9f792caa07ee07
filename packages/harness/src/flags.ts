import { HarnessError } from './errors.js';

/** What a flag takes: a value (`--kills 20`) or nothing (`--keep`). */
export type FlagKind = 'value' | 'switch';

/**
 * Parses `--name value` and `--name` switches against a list of known flags.
 * An unknown flag, a missing value or a repeated flag is refused naming the
 * flag: a typo must not silently fall back to a default. A bare `--` is
 * skipped.
 */
export function parseFlags(
  argv: readonly string[],
  known: Readonly<Record<string, FlagKind>>,
  where: string,
): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    // `pnpm harness:crash -- --kills 3` forwards the `--` itself.
    if (arg === '--') continue;
    if (!arg.startsWith('--')) {
      throw new HarnessError(
        'TWG_HARNESS_ARGS',
        `${where}: unexpected argument ${JSON.stringify(arg)}`,
      );
    }
    const name = arg.slice(2);
    const kind = known[name];
    if (kind === undefined) {
      throw new HarnessError(
        'TWG_HARNESS_ARGS',
        `${where}: unknown flag --${name} (known: ${Object.keys(known)
          .map((k) => `--${k}`)
          .join(', ')})`,
      );
    }
    if (out.has(name))
      throw new HarnessError('TWG_HARNESS_ARGS', `${where}: --${name} given twice`);
    if (kind === 'switch') {
      out.set(name, true);
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) {
      throw new HarnessError('TWG_HARNESS_ARGS', `${where}: --${name} needs a value`);
    }
    out.set(name, value);
    i += 1;
  }
  return out;
}

/** An integer flag within [min, max], or the default when absent. */
export function intFlag(
  flags: ReadonlyMap<string, string | true>,
  name: string,
  fallback: number,
  min: number,
  max: number,
  where: string,
): number {
  const raw = flags.get(name);
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new HarnessError(
      'TWG_HARNESS_ARGS',
      `${where}: --${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

/** A required string flag. */
export function textFlag(
  flags: ReadonlyMap<string, string | true>,
  name: string,
  where: string,
): string {
  const raw = flags.get(name);
  if (typeof raw !== 'string' || raw.length === 0) {
    throw new HarnessError('TWG_HARNESS_ARGS', `${where}: --${name} is required`);
  }
  return raw;
}

/** A flag that takes one of `choices`; absent: the first. */
export function choiceFlag<T extends string>(
  flags: ReadonlyMap<string, string | true>,
  name: string,
  choices: readonly [T, ...T[]],
  where: string,
): T {
  const raw = flags.get(name);
  if (raw === undefined) return choices[0];
  const found = choices.find((c) => c === raw);
  if (found === undefined) {
    throw new HarnessError(
      'TWG_HARNESS_ARGS',
      `${where}: --${name} must be ${choices.join(' or ')}, got ${String(raw)}`,
    );
  }
  return found;
}

/** A comma-separated list of integers within [min, max]; absent: none. */
export function intListFlag(
  flags: ReadonlyMap<string, string | true>,
  name: string,
  min: number,
  max: number,
  where: string,
): number[] {
  const raw = flags.get(name);
  if (raw === undefined) return [];
  const parts = typeof raw === 'string' ? raw.split(',') : [''];
  return parts.map((part) => {
    const value = /^-?\d+$/.test(part) ? Number(part) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new HarnessError(
        'TWG_HARNESS_ARGS',
        `${where}: --${name} must be a comma-separated list of integers in [${min}, ${max}], got ${JSON.stringify(raw)}`,
      );
    }
    return value;
  });
}
