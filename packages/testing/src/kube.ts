import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Where and as whom the tests reach the Kubernetes API server. */
export interface KubeAccess {
  /** `https://host:port` of the API server. */
  server: string;
  /** The bearer token of the kubeconfig's user. */
  token: string;
  /** The CA certificate(s) the server's certificate is checked against, PEM (absent: the system's). */
  caData?: string;
  /** The kubeconfig says to skip the server certificate check. */
  insecureSkipTlsVerify?: boolean;
}

/**
 * The API server of the tests: the current context of the kubeconfig KUBECONFIG names (written
 * by `eval "$(bash scripts/kube-apiserver.sh)"`), or null when KUBECONFIG is unset, so tests
 * that need the API server can skip without it. Only token users are supported: that is what
 * the script writes, and what a service account has.
 */
export function kubeConfigFromEnv(env: NodeJS.ProcessEnv = process.env): KubeAccess | null {
  const file = env.KUBECONFIG?.split(':')[0];
  if (!file) return null;
  const text = readFileSync(file, 'utf8');
  const config = asRecord(text.trimStart().startsWith('{') ? JSON.parse(text) : parseYamlSubset(text));
  const contextName = str(config['current-context']);
  const context = asRecord(named(config.contexts, contextName, file).context);
  const cluster = asRecord(named(config.clusters, str(context.cluster), file).cluster);
  const user = asRecord(named(config.users, str(context.user), file).user);
  const relative = (p: string) => resolve(dirname(file), p);
  const server = str(cluster.server);
  const token =
    str(user.token) || (str(user.tokenFile) && readFileSync(relative(str(user.tokenFile)), 'utf8').trim());
  if (!server || !token) throw new Error(`${file}: context ${contextName} has no server or no token user`);
  const caData = str(cluster['certificate-authority-data'])
    ? Buffer.from(str(cluster['certificate-authority-data']), 'base64').toString('utf8')
    : str(cluster['certificate-authority'])
      ? readFileSync(relative(str(cluster['certificate-authority'])), 'utf8')
      : undefined;
  return {
    server: server.replace(/\/+$/, ''),
    token,
    ...(caData ? { caData } : {}),
    ...(cluster['insecure-skip-tls-verify'] === true || cluster['insecure-skip-tls-verify'] === 'true'
      ? { insecureSkipTlsVerify: true }
      : {}),
  };
}

type Yaml = string | boolean | Yaml[] | { [key: string]: Yaml };

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function named(list: unknown, name: string, file: string): Record<string, unknown> {
  const found = Array.isArray(list) ? list.map(asRecord).find((entry) => entry.name === name) : undefined;
  if (!found) throw new Error(`${file}: no entry named "${name}"`);
  return found;
}

/**
 * The YAML that kubeconfigs are written in: block maps, block sequences (of maps or scalars),
 * plain or quoted scalars, comments. Not a general YAML parser; no dependency for one file.
 */
function parseYamlSubset(text: string): Yaml {
  const lines = text
    .split('\n')
    .map((raw) => raw.replace(/\s+#.*$/, '').replace(/\s+$/, ''))
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#') && line !== '---')
    .map((line) => ({ indent: line.length - line.trimStart().length, text: line.trim() }));
  let at = 0;
  const block = (indent: number): Yaml => {
    const first = lines[at];
    if (!first || first.indent < indent) return '';
    if (first.text.startsWith('- ') || first.text === '-') {
      const items: Yaml[] = [];
      while (lines[at]?.indent === first.indent && lines[at]?.text.startsWith('-')) {
        const line = lines[at]!;
        const rest = line.text.slice(1).trimStart();
        // The item's own first line becomes a line of a deeper block.
        if (rest === '') at++;
        else lines[at] = { indent: line.indent + (line.text.length - rest.length), text: rest };
        items.push(block(first.indent + 1));
      }
      return items;
    }
    const map: { [key: string]: Yaml } = {};
    while (lines[at]?.indent === first.indent && !lines[at]?.text.startsWith('- ')) {
      const { text: entry } = lines[at]!;
      const colon = entry.search(/:( |$)/);
      if (colon < 0) return scalar(lines[at++]!.text);
      const key = scalar(entry.slice(0, colon)) as string;
      const value = entry.slice(colon + 1).trim();
      at++;
      map[key] =
        value !== '' ? scalar(value) : block(first.indent + (lines[at]?.text.startsWith('-') ? 0 : 1));
    }
    return map;
  };
  return block(0);
}

function scalar(raw: string): string | boolean {
  if (raw.startsWith('"')) return JSON.parse(raw) as string;
  if (raw.startsWith("'")) return raw.slice(1, -1).replace(/''/g, "'");
  return raw === 'true' ? true : raw === 'false' ? false : raw;
}
