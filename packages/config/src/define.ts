import type { EnvSchema } from './schemas';

/** The processes that read configuration from the environment. */
export type AppName = 'server' | 'jobs' | 'docker-executor' | 'k8s-executor' | 'runner' | 'cli';
export const APP_NAMES: readonly AppName[] = [
  'server',
  'jobs',
  'docker-executor',
  'k8s-executor',
  'runner',
  'cli',
];

export interface VarSpec<T> {
  /** The canonical name. */
  name: string;
  /** Other names with the same meaning and format. The canonical name wins; both set to different values is an error. */
  aliases?: readonly string[];
  /** Parses the raw (non-empty) string. */
  schema: EnvSchema<T>;
  /** The default as a user would write it; parsed by `schema` like any value. */
  default?: string;
  /** One or two sentences for --help and the README table. Say the default when it is computed. */
  description: string;
  /** Never printed: errors say `(set, hidden)`. */
  secret?: boolean;
  /** The apps that read it. */
  apps: readonly AppName[];
  /** For documentation only: this variable is an alternative spelling of another (e.g. SECRET_ENCRYPTION_KEY). */
  aliasOf?: string;
}

/** A defined variable. `HasDefault` lets readers return `T` rather than `T | undefined`. */
export interface VarDef<T, HasDefault extends boolean = boolean> extends Readonly<VarSpec<T>> {
  readonly hasDefault: HasDefault;
}

/** What `allVars()` returns: the metadata of a variable without its parser. */
export interface VarInfo {
  name: string;
  aliases: string[];
  default?: string;
  description: string;
  secret: boolean;
  apps: AppName[];
  aliasOf?: string;
}

/**
 * Every variable defined anywhere in this package, by name. Redefining a name
 * replaces it in place (jest may evaluate a module twice).
 */
const catalogue = new Map<string, VarDef<unknown>>();

export function defineVar<T>(spec: VarSpec<T> & { default: string }): VarDef<T, true>;
export function defineVar<T>(spec: VarSpec<T>): VarDef<T, false>;
export function defineVar<T>(spec: VarSpec<T>): VarDef<T> {
  if (spec.default !== undefined) {
    // A default that its own schema refuses is a programming error: fail at import, not at start.
    const parsed = spec.schema.safeParse(spec.default);
    if (!parsed.success)
      throw new Error(`${spec.name}: the default ${JSON.stringify(spec.default)} is invalid`);
  }
  const def: VarDef<T> = { ...spec, hasDefault: spec.default !== undefined };
  catalogue.set(spec.name, def as VarDef<unknown>);
  return def;
}

/** Metadata of every variable, in definition order, for --help and docs. */
export function allVars(): VarInfo[] {
  return [...catalogue.values()].map((def) => ({
    name: def.name,
    aliases: [...(def.aliases ?? [])],
    ...(def.default !== undefined ? { default: def.default } : {}),
    description: def.description,
    secret: def.secret ?? false,
    apps: [...def.apps],
    ...(def.aliasOf ? { aliasOf: def.aliasOf } : {}),
  }));
}

/** The variables an app reads. */
export function varsFor(app: AppName): VarInfo[] {
  return allVars().filter((info) => info.apps.includes(app));
}
