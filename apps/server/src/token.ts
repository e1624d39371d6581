import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createUserToken,
  DEFAULT_USER_TOKEN_LIFETIME,
  LIFETIME_FORMAT,
  parseTokenLifetime,
  workspaceNameProblem,
} from '@sluice/auth';
import { loadSecrets } from '@sluice/bootstrap';

const USAGE = `usage: sluice token create --workspace W --user U --role admin|member [--expires 30d]

Prints a user JWT for the public API. The token is alone on the last line of
the output.

Options:
  --workspace W     the workspace the token acts in
  --user U          the user it names (the subject)
  --role R          admin or member
  --expires D       how long it stays valid: ${LIFETIME_FORMAT};
                    ${DEFAULT_USER_TOKEN_LIFETIME} by default. Every token expires.
  --help            this text

Without AUTH_JWT_SECRET it signs with the secret a standalone server generated
in SLUICE_DATA_DIR, which must already hold secrets.json: this command never
creates secrets.

Environment:
`;

/** The variables this command reads, described as the server's --help does. */
const TOKEN_VARS = ['AUTH_JWT_SECRET', 'SLUICE_DATA_DIR'];

/** A wrong invocation or missing configuration: one line on stderr, exit code 2. */
class UsageError extends Error {}

/** `sluice token create ...` */
export async function tokenCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  try {
    return await run(argv, env);
  } catch (error) {
    const usage = error instanceof UsageError;
    const hint = usage ? ' (see sluice token create --help)' : '';
    process.stderr.write(`sluice token: ${(error as Error).message}${hint}\n`);
    return usage ? 2 : 1;
  }
}

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError('expected a subcommand: create');
  // `help` only as the subcommand: after create it could be the value of an option.
  const help = sub === 'help' || isHelpFlag(sub) || (sub === 'create' && rest.some(isHelpFlag));
  if (help) {
    const { formatVarsHelp } = await import('@sluice/config');
    process.stdout.write(`${USAGE}${formatVarsHelp('server', TOKEN_VARS)}\n`);
    return 0;
  }
  if (sub !== 'create') throw new UsageError(`unknown subcommand "${sub}"; the only one is create`);
  const values = parseOptions(rest);
  const missing = (['workspace', 'user', 'role'] as const).filter((k) => !values[k]);
  if (missing.length > 0) throw new UsageError(`missing --${missing.join(', --')}`);
  const role = values.role;
  if (role !== 'admin' && role !== 'member') {
    throw new UsageError(`--role must be admin or member, got "${role}"`);
  }
  const badWorkspace = workspaceNameProblem(values.workspace!);
  if (badWorkspace) throw new UsageError(`--workspace: ${badWorkspace}`);
  const expires = values.expires ?? DEFAULT_USER_TOKEN_LIFETIME;
  const seconds = parseTokenLifetime(expires);
  if (seconds === null) throw new UsageError(`--expires "${expires}" is not ${LIFETIME_FORMAT}`);

  const token = await createUserToken(
    signingSecret(env),
    { workspace: values.workspace!, user: values.user!, role },
    { expiresIn: `${seconds}s` },
  );
  process.stdout.write(`${token}\n`);
  return 0;
}

function isHelpFlag(arg: string): boolean {
  return arg === '--help' || arg === '-h';
}

function parseOptions(args: string[]): Partial<Record<'workspace' | 'user' | 'role' | 'expires', string>> {
  try {
    return parseArgs({
      args,
      options: {
        workspace: { type: 'string' },
        user: { type: 'string' },
        role: { type: 'string' },
        expires: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    // node:util's messages are one sentence plus advice; keep the sentence.
    throw new UsageError((error as Error).message.split('. ')[0]!.replace(/\.$/, ''));
  }
}

/**
 * AUTH_JWT_SECRET, else the standalone server's generated one. Never a new
 * secret: a token signed with one no server knows would be rejected.
 */
function signingSecret(env: NodeJS.ProcessEnv): string {
  if (env.AUTH_JWT_SECRET) return env.AUTH_JWT_SECRET;
  const dataDir = resolve(env.SLUICE_DATA_DIR || './.sluice');
  const found = loadSecrets(dataDir);
  if (!found) {
    throw new UsageError(
      `AUTH_JWT_SECRET is not set and ${dataDir} holds no standalone server's secrets.json: ` +
        "set AUTH_JWT_SECRET to the server's secret, or SLUICE_DATA_DIR to its data directory",
    );
  }
  process.stderr.write(`AUTH_JWT_SECRET is not set: signing with the standalone secret in ${found.path}\n`);
  return found.secrets.authJwtSecret;
}
