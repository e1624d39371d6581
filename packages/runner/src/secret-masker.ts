/** What a masked secret becomes. */
export const MASK = '***';

/**
 * Secret values (and forms of them) shorter than this are not masked: masking
 * every "a" or "42" would wreck logs while hiding nothing. See docs/secrets.md.
 */
export const MIN_MASKED_LENGTH = 4;

/**
 * Replaces every resolved secret value in text that leaves the runner (log
 * lines, outputs, metric tags, error messages, diagnostics) with `***`,
 * together with the forms a task most often prints it in: each line of a
 * multi-line value, JSON-escaped, URL-encoded, and base64 (standard and
 * url-safe, padded or not, and at every alignment inside a longer base64
 * text). One RegExp of escaped alternatives, longest first, so a longer form
 * wins over a shorter one it contains.
 */
export class SecretMasker {
  private readonly pattern: RegExp | null;
  private readonly forms: string[];

  constructor(secretValues: readonly string[]) {
    const forms = new Set<string>();
    for (const value of secretValues) {
      if (value.length < MIN_MASKED_LENGTH) continue; // nor any form of it: see MIN_MASKED_LENGTH
      for (const form of formsOf(value)) forms.add(form);
    }
    this.forms = [...forms].filter((f) => f.length >= MIN_MASKED_LENGTH).sort((a, b) => b.length - a.length);
    this.pattern = this.forms.length ? new RegExp(this.forms.map(escapeRegExp).join('|'), 'g') : null;
  }

  get active(): boolean {
    return this.pattern !== null;
  }

  mask(text: string): string {
    if (!this.pattern || text.length < MIN_MASKED_LENGTH) return text;
    return text.replace(this.pattern, MASK);
  }

  /**
   * For a line cut at the length limit: besides whole forms, a tail that is
   * the beginning of a form (the rest of it was cut off) is masked too, if at
   * least MIN_MASKED_LENGTH long.
   */
  maskCut(text: string): string {
    const masked = this.mask(text);
    let cutFrom = masked.length;
    for (const form of this.forms) {
      // The earliest start whose rest of the text begins the form is the longest such tail.
      const lowest = Math.max(0, masked.length - form.length + 1);
      for (let start = lowest; start <= masked.length - MIN_MASKED_LENGTH && start < cutFrom; start++) {
        if (masked.charCodeAt(start) === form.charCodeAt(0) && form.startsWith(masked.slice(start))) {
          cutFrom = start;
          break;
        }
      }
    }
    return cutFrom < masked.length ? masked.slice(0, cutFrom) + MASK : masked;
  }

  maskRecord(record: Record<string, string>): Record<string, string> {
    if (!this.pattern) return record;
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [this.mask(k), this.mask(v)]));
  }
}

function formsOf(value: string): string[] {
  const plain = [value];
  // Log lines are cut on \n, so a multi-line secret shows up one line at a time.
  if (value.includes('\n')) plain.push(...value.split('\n').map((line) => line.replace(/\r$/, '')));
  const forms = [...plain];
  for (const p of plain) {
    forms.push(JSON.stringify(p).slice(1, -1));
    forms.push(encodeURIComponent(p));
  }
  for (const b64 of base64Forms(Buffer.from(value, 'utf8'))) {
    forms.push(b64, toUrlSafe(b64));
  }
  return forms;
}

/**
 * Base64 of the value on its own (padded and not), and the characters that
 * depend on the value alone when it sits at byte offset 0, 1 or 2 of a 3-byte
 * group inside some longer text (`base64(prefix + secret + suffix)`).
 */
function base64Forms(bytes: Buffer): string[] {
  const whole = bytes.toString('base64');
  const forms = [whole, whole.replace(/=+$/, '')];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Character i carries bits [6i, 6i+6): keep those entirely inside the value's bits.
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    if (end > first) forms.push(encoded.slice(first, end));
  }
  return forms;
}

function toUrlSafe(b64: string): string {
  return b64.replace(/\+/g, '-').replace(/\//g, '_');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
