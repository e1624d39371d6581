const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const BARE_SECONDS = /^\d+(?:\.\d+)?$/;

/**
 * A duration of the flow file in milliseconds: `500ms`, `10s`, `30m`, `2h`,
 * `1d`, combinations such as `1h30m`, or a bare number of seconds (`30`,
 * written as a YAML number or a string). Undefined when `value` is none of
 * these (negative numbers included). Fractions round to whole milliseconds.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (BARE_SECONDS.test(text)) return Math.round(Number(text) * 1000);
  if (!WHOLE.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) {
    total += Number(amount) * UNIT_MS[unit as Unit];
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

export const DURATION_HINT = 'a duration such as 500ms, 10s, 30m, 2h, 1d or 1h30m, or a number of seconds';
