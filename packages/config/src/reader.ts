import { isDeepStrictEqual } from 'node:util';
import type { VarDef } from './define';
import { ConfigError, type ConfigProblem } from './errors';

export type Env = Record<string, string | undefined>;

const SHOWN_CHARS = 120;

/**
 * Reads variables from one environment, collecting every problem instead of
 * stopping at the first. An empty or blank value counts as unset, so
 * `FOO=` in an env file behaves like no `FOO` at all.
 */
export class EnvReader {
  readonly problems: ConfigProblem[] = [];
  /** Canonical names of the variables read so far (tests check them against each variable's `apps`). */
  readonly names = new Set<string>();

  constructor(private readonly env: Env) {}

  /** A raw value, or undefined when unset or blank. */
  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value;
  }

  /** Whether the variable or one of its aliases is set. */
  isSet(def: VarDef<unknown>): boolean {
    return [def.name, ...(def.aliases ?? [])].some((name) => this.raw(name) !== undefined);
  }

  /** The parsed value (or the parsed default); undefined when unset without default, or invalid. */
  get<T>(def: VarDef<T, true>): T;
  get<T>(def: VarDef<T, false>): T | undefined;
  get<T>(def: VarDef<T>): T | undefined;
  get<T>(def: VarDef<T>): T | undefined {
    this.names.add(def.name);
    const source = this.source(def);
    const raw = source?.raw ?? def.default;
    if (raw === undefined) return undefined;
    const parsed = def.schema.safeParse(raw);
    if (parsed.success) return parsed.data;
    this.problems.push({
      variable: source ? this.label(def, source.name) : `${def.name} (default)`,
      message: parsed.error.issues.map((issue) => issue.message).join('; '),
      ...(source ? { received: this.show(def, source.raw) } : {}),
    });
    return undefined;
  }

  /**
   * The parsed value of a variable this app cannot run without. When it is
   * missing a problem is recorded and the returned placeholder is never seen:
   * `finish` throws first.
   */
  require<T>(def: VarDef<T>, why: string): T {
    const before = this.problems.length;
    const value = this.get(def);
    if (value === undefined && this.problems.length === before) {
      const names = [def.name, ...(def.aliases ?? [])].join(' or ');
      this.problems.push({ variable: names, message: `is required (${why}) but not set` });
    }
    return value as T;
  }

  /** Records a problem found by a check across variables. */
  problem(variable: string, message: string): void {
    this.problems.push({ variable, message });
  }

  /** Returns the finished config, or throws one ConfigError listing every problem. */
  finish<C>(app: string, config: C): C {
    if (this.problems.length > 0) throw new ConfigError(app, this.problems);
    return config;
  }

  /** Picks the canonical name over aliases; aliases set to a different value are an error. */
  private source(def: VarDef<unknown>): { name: string; raw: string } | undefined {
    const set = [def.name, ...(def.aliases ?? [])].flatMap((name) => {
      const raw = this.raw(name);
      return raw === undefined ? [] : [{ name, raw }];
    });
    const [first, ...others] = set;
    for (const other of others) {
      if (first && !this.same(def, first.raw, other.raw)) {
        this.problems.push({
          variable: `${first.name} and ${other.name}`,
          message: `both are set to different values; they mean the same, so set only ${def.name}`,
        });
      }
    }
    return first;
  }

  /** Two spellings agree when they parse to the same value (e.g. one key in hex and in base64). */
  private same(def: VarDef<unknown>, a: string, b: string): boolean {
    const left = def.schema.safeParse(a);
    const right = def.schema.safeParse(b);
    if (left.success && right.success) return isDeepStrictEqual(left.data, right.data);
    return a.trim() === b.trim();
  }

  private label(def: VarDef<unknown>, name: string): string {
    return name === def.name ? name : `${name} (alias of ${def.name})`;
  }

  private show(def: VarDef<unknown>, raw: string): string {
    if (def.secret) return '(set, hidden)';
    const shown = raw.length > SHOWN_CHARS ? `${raw.slice(0, SHOWN_CHARS)}…` : raw;
    return JSON.stringify(shown);
  }
}
