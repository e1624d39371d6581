import { defineVar } from '../define';
import { httpUrl, text } from '../schemas';

/** The user CLI's variables (docs/cli.md#configuration): a flag wins over them, they win over the config file. */
export const SLUICE_URL = defineVar({
  name: 'SLUICE_URL',
  schema: httpUrl(),
  description:
    "The server's public API, e.g. http://127.0.0.1:8080 (the --server flag wins; else the `sluice login` config file).",
  apps: ['cli'],
});

export const SLUICE_TOKEN = defineVar({
  name: 'SLUICE_TOKEN',
  schema: text(),
  secret: true,
  description:
    'The user token the CLI sends (the --token flag wins; else the `sluice login` config file). Create one with `sluice token create`.',
  apps: ['cli'],
});
