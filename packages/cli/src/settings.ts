import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ConfigError, parseClientEnv } from '@sluice/config';
import { UsageError } from './errors';

/** What `sluice login` saves. */
const ConfigFile = z.object({ server: z.string(), token: z.string() });
export type ConfigFile = z.infer<typeof ConfigFile>;

/** $XDG_CONFIG_HOME/sluice/config.json, else ~/.config/sluice/config.json. */
export function configFilePath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), '.config');
  return join(base, 'sluice', 'config.json');
}

export function readConfigFile(env: NodeJS.ProcessEnv): ConfigFile | null {
  const path = configFilePath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not JSON; run sluice login again`);
  }
  const config = ConfigFile.safeParse(parsed);
  if (!config.success) throw new UsageError(`${path} lacks server or token; run sluice login again`);
  return config.data;
}

/** Written to a temporary file of mode 0600 first, so the token is never readable by others, nor half-written. */
export function writeConfigFile(env: NodeJS.ProcessEnv, config: ConfigFile): string {
  const path = configFilePath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return path;
}

export interface Connection {
  server: string;
  token: string;
}

/** Flag, then environment, then the config file (docs/cli.md#configuration). */
export function resolveConnection(
  flags: { server?: string | undefined; token?: string | undefined },
  env: NodeJS.ProcessEnv,
): Connection {
  const fromEnv = clientEnv(env);
  const needFile = !(flags.server ?? fromEnv.url) || !(flags.token ?? fromEnv.token);
  const file = needFile ? readConfigFile(env) : null;
  const server = flags.server ?? fromEnv.url ?? file?.server;
  const token = flags.token ?? fromEnv.token ?? file?.token;
  if (!server) throw new UsageError('no server: pass --server, set SLUICE_URL or run sluice login');
  if (!token) throw new UsageError('no token: pass --token, set SLUICE_TOKEN or run sluice login');
  return { server: checkServerUrl(server), token };
}

/** SLUICE_URL and SLUICE_TOKEN as @sluice/config validates them, a bad one as one line. */
export function clientEnv(env: NodeJS.ProcessEnv): { url?: string; token?: string } {
  try {
    return parseClientEnv(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      const problem = error.problems[0]!;
      throw new UsageError(`${problem.variable}: ${problem.message}`);
    }
    throw error;
  }
}

export function checkServerUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`server "${raw}" is not a URL such as http://127.0.0.1:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`server "${raw}" is not an http(s) URL`);
  return url.toString().replace(/\/+$/, '');
}
