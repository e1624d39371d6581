import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../errors';

export interface LocalFlow {
  id: string;
  /** As shown to people: `flows/<id>.yaml`, relative to the folder. */
  file: string;
  source: string;
}

export interface LocalFile {
  /** The namespace file's path: relative to files/, or `namespace.yaml`. */
  path: string;
  file: string;
  content: Buffer;
  sha256: string;
}

export interface NamespaceFolder {
  namespace: string;
  namespaceYaml: LocalFile | null;
  flows: LocalFlow[];
  files: LocalFile[];
}

const FLOW_FILE = /^(.+)\.ya?ml$/;

function localFile(root: string, absolute: string, path: string): LocalFile {
  const content = readFileSync(absolute);
  return {
    path,
    file: relative(root, absolute).split(sep).join('/'),
    content,
    sha256: createHash('sha256').update(content).digest('hex'),
  };
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) return walk(full);
      return entry.isFile() ? [full] : [];
    });
}

/**
 * A namespace folder (docs/cli.md#apply): `namespace.yaml` (optional),
 * `flows/<id>.yaml`, and `files/**` stored under their path below files/.
 * The namespace is the folder's name unless `namespace` says otherwise.
 */
export function readNamespaceFolder(folder: string, namespace?: string): NamespaceFolder {
  const root = resolve(folder);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new UsageError(`${folder} is not a folder`);
  const flowsDir = join(root, 'flows');
  const filesDir = join(root, 'files');
  const namespaceFile = join(root, 'namespace.yaml');
  const flows: LocalFlow[] = [];
  if (existsSync(flowsDir)) {
    for (const entry of readdirSync(flowsDir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const match = FLOW_FILE.exec(entry.name);
      if (!entry.isFile() || !match) {
        throw new UsageError(`flows/${entry.name}: flows/ holds only flow files named <flow-id>.yaml`);
      }
      flows.push({
        id: match[1]!,
        file: `flows/${entry.name}`,
        source: readFileSync(join(flowsDir, entry.name), 'utf8'),
      });
    }
  }
  const files = existsSync(filesDir)
    ? walk(filesDir).map((f) => localFile(root, f, relative(filesDir, f).split(sep).join('/')))
    : [];
  if (files.some((f) => f.path === 'namespace.yaml'))
    throw new UsageError('files/namespace.yaml: the namespace.yaml goes at the top of the folder');
  const hasNamespaceYaml = existsSync(namespaceFile);
  if (flows.length === 0 && files.length === 0 && !hasNamespaceYaml)
    throw new UsageError(`${folder} holds no namespace.yaml, flows/ or files/`);
  return {
    namespace: namespace ?? basename(root),
    namespaceYaml: hasNamespaceYaml ? localFile(root, namespaceFile, 'namespace.yaml') : null,
    flows,
    files,
  };
}
