import { NamespaceList } from '@sluice/api-schemas';
import { outputFormat, parse, positionals } from '../args';
import { ApiClient } from '../client';
import { printHelp, type Command } from '../command';
import { ApiError, CliError, UsageError } from '../errors';
import type { Io } from '../io';
import { printJson } from '../output';
import { checkServerUrl, clientEnv, writeConfigFile } from '../settings';

/** The claims a user token names, read without verifying it (the server just did). */
function claims(token: string): { workspace?: string; user?: string; role?: string } {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return {
      workspace: typeof payload.workspace === 'string' ? payload.workspace : undefined,
      user: typeof payload.sub === 'string' ? payload.sub : undefined,
      role: typeof payload.role === 'string' ? payload.role : undefined,
    };
  } catch {
    return {};
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

export const login: Command = {
  name: 'login',
  summary: 'Save a server and token',
  usage: `usage: sluice login --server URL [--token T]

Checks the token against the server (one authenticated call), then saves both
to $XDG_CONFIG_HOME/sluice/config.json (default ~/.config/sluice/config.json),
mode 0600, for the other commands. Without --token the token is SLUICE_TOKEN,
else read from stdin (sluice token create ... | tail -n1 | sluice login --server URL).`,

  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals: rest } = parse(args, {});
    if (values.help) return printHelp(io, this);
    positionals(rest, []);
    const format = outputFormat(values.output);
    const env = clientEnv(io.env);
    const serverRaw = values.server ?? env.url;
    if (!serverRaw) throw new UsageError('missing --server (or SLUICE_URL)');
    const server = checkServerUrl(serverRaw);
    let token = values.token ?? env.token;
    if (!token && !process.stdin.isTTY) token = await readStdin();
    if (!token) throw new UsageError('missing --token (or SLUICE_TOKEN, or the token on stdin)');
    try {
      await new ApiClient({ server, token }).json('GET', '/namespaces', NamespaceList, {
        query: { limit: 1 },
      });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401)
        throw new CliError(`${server} refused the token: ${error.message}; nothing saved`);
      throw error;
    }
    const path = writeConfigFile(io.env, { server, token });
    const who = claims(token);
    if (format === 'json') printJson(io, { server, configFile: path, ...who });
    else {
      const as = who.user ? ` as ${who.user}${who.workspace ? ` in workspace ${who.workspace}` : ''}` : '';
      io.out(`logged in to ${server}${as}; saved to ${path}\n`);
    }
    return 0;
  },
};
