/**
 * ISO 8601 renderings of Arrow dates and timestamps over their whole range,
 * without `Date` (whose range, ±273,790 years, is narrower than an int32 of
 * days or an int64 of seconds) and without rounding a timestamp to
 * milliseconds (apache-arrow's getters do, or throw beyond 2^53).
 *
 * Years 0000–9999 have four digits; others a sign and at least six, the
 * expanded form `Date.prototype.toISOString` uses. The calendar is the
 * proleptic Gregorian one, by Howard Hinnant's `civil_from_days`.
 */
export function isoDate(daysSinceEpoch: number): string {
  const z = daysSinceEpoch + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return `${formatYear(year)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** Units per second of Arrow's `TimeUnit` (SECOND, MILLISECOND, MICROSECOND, NANOSECOND). */
const PER_SECOND = [1n, 1000n, 1_000_000n, 1_000_000_000n] as const;
const DIGITS = [0, 3, 6, 9] as const;

/**
 * `value` units since the epoch, with exactly the unit's fraction digits. An
 * Arrow timestamp with a time zone is an instant stored in UTC: it ends in
 * `Z`. One without is a wall-clock time in no zone: it has no suffix.
 */
export function isoTimestamp(value: bigint, unit: number, zoned: boolean): string {
  const perSecond = PER_SECOND[unit] ?? 1n;
  const seconds = floorDiv(value, perSecond);
  const fraction = value - seconds * perSecond;
  const days = floorDiv(seconds, 86400n);
  const secondOfDay = Number(seconds - days * 86400n);
  const hh = Math.floor(secondOfDay / 3600);
  const mm = Math.floor((secondOfDay % 3600) / 60);
  const ss = secondOfDay % 60;
  const digits = DIGITS[unit] ?? 0;
  const frac = digits === 0 ? '' : `.${fraction.toString().padStart(digits, '0')}`;
  return `${isoDate(Number(days))}T${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}${frac}${zoned ? 'Z' : ''}`;
}

/** Milliseconds since the epoch of `value` units, rounded toward negative infinity. */
export function timestampMillis(value: bigint, unit: number): bigint {
  const perSecond = PER_SECOND[unit] ?? 1n;
  return perSecond >= 1000n ? floorDiv(value, perSecond / 1000n) : value * 1000n;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function formatYear(year: number): string {
  if (year >= 0 && year <= 9999) return pad(year, 4);
  return `${year < 0 ? '-' : '+'}${pad(Math.abs(year), 6)}`;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
