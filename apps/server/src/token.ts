import { parseArgs } from 'node:util';
import { createUserToken } from '@sluice/auth';
import { loadOrCreateSecrets } from '@sluice/bootstrap';

const USAGE = `usage: sluice token create --workspace W --user U --role admin|member [--expires 30d]

Prints a user JWT for the public API, signed with AUTH_JWT_SECRET, or with the
secret a standalone server generated under SLUICE_DATA_DIR (default ./.sluice).
The token is alone on the last line of the output.`;

/** `sluice token create ...` */
export async function tokenCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'create') {
    process.stderr.write(`${USAGE}\n`);
    return sub === '--help' || sub === 'help' ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      workspace: { type: 'string' },
      user: { type: 'string' },
      role: { type: 'string' },
      expires: { type: 'string', default: '30d' },
    },
    strict: true,
  });
  const missing = (['workspace', 'user', 'role'] as const).filter((k) => !values[k]);
  if (missing.length > 0 || (values.role !== 'admin' && values.role !== 'member')) {
    process.stderr.write(
      `${missing.length ? `missing --${missing.join(', --')}` : `--role must be admin or member, got "${values.role}"`}\n${USAGE}\n`,
    );
    return 2;
  }
  let secret = env.AUTH_JWT_SECRET;
  if (!secret) {
    const dataDir = env.SLUICE_DATA_DIR || './.sluice';
    const { secrets, path } = loadOrCreateSecrets(dataDir);
    secret = secrets.authJwtSecret;
    process.stderr.write(`AUTH_JWT_SECRET is not set: signing with the standalone secret in ${path}\n`);
  }
  const token = await createUserToken(
    secret,
    { workspace: values.workspace!, user: values.user!, role: values.role },
    { expiresIn: values.expires },
  );
  process.stdout.write(`${token}\n`);
  return 0;
}
