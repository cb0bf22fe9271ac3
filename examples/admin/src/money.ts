/**
 * Money in the service is integers of minor units (cents); an operator reads and types it in the
 * currency's major unit ($51.00), and these convert both ways, by the currency's own number of
 * decimals (none for JPY, three for KWD).
 */
const formatter = (currency: string) => new Intl.NumberFormat('en-US', { style: 'currency', currency });

/** How many decimals the currency's amounts have (2 for USD). */
export const fractionDigits = (currency: string): number => formatter(currency).resolvedOptions().maximumFractionDigits ?? 2;

export function formatMoney(minor: number, currency: string): string {
  return formatter(currency).format(minor / 10 ** fractionDigits(currency));
}

/** An amount as a form field shows it: major units with the currency's decimals ("51.00"). */
export const toMajorInput = (minor: number, currency: string): string => (minor / 10 ** fractionDigits(currency)).toFixed(fractionDigits(currency));

/** The step of a form field of that currency ("0.01" for USD, "1" for JPY). */
export const inputStep = (currency: string): string => (fractionDigits(currency) === 0 ? '1' : (10 ** -fractionDigits(currency)).toFixed(fractionDigits(currency)));

/**
 * What the operator typed, in major units ("51", "51.5", "51.50"), as minor units; undefined when
 * it is not an amount of that currency (more decimals than it has). Digits, not floating point:
 * 0.29 * 100 is 28.999999999999996.
 */
export function toMinor(major: string, currency: string): number | undefined {
  const digits = fractionDigits(currency);
  const match = /^(\d+)(?:\.(\d*))?$/.exec(major.trim());
  if (match === null) return undefined;
  const [, whole = '0', fraction = ''] = match;
  if (fraction.length > digits) return undefined;
  return Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
}
