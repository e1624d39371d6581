/**
 * The host variables that cross into a runner (from a process-executor
 * instance) and from the runner into its task: what a shell needs, and the
 * host's proxy settings. Nothing else of a server's environment —
 * SLUICE_DATABASE_URL, SLUICE_MASTER_KEYS, AUTH_JWT_SECRET, … — goes along:
 * the task's own environment (secrets included) comes from the runner API.
 * NODE_OPTIONS is deliberately absent: the runner is a Node program and would
 * honour it.
 */
export const HOST_ENV_ALLOWLIST = [
  'PATH',
  'HOME',
  'TZ',
  'LANG',
  'LC_ALL',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
] as const;
