import { FileList, FileWritten, Flow, NamespaceValidation } from '@sluice/api-schemas';
import { outputFormat, parse, positionals } from '../args';
import { type ApiClient } from '../client';
import { connect, printHelp, type Command } from '../command';
import { ApiError, CliError } from '../errors';
import type { Io } from '../io';
import { readNamespaceFolder, type NamespaceFolder } from '../apply/folder';
import { mapIssueToLine } from '../apply/lines';
import { printJson } from '../output';

type Change = 'created' | 'updated' | 'unchanged';

interface PlannedChange {
  kind: 'namespace.yaml' | 'file' | 'flow';
  /** The file in the folder. */
  file: string;
  change: Change;
  put: () => Promise<unknown>;
}

interface Issue {
  code: string;
  path: string;
  message: string;
}

interface Problem {
  file: string;
  line: number;
  code: string;
  path: string;
  message: string;
}

/** Requests in flight at once while comparing flows. */
const PARALLEL = 8;

async function inBatches<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += PARALLEL)
    out.push(...(await Promise.all(items.slice(i, i + PARALLEL).map(fn))));
  return out;
}

const NS_PREFIX = /^namespace\.yaml:?/;

/** The server's issues at the file and line they are about. */
function problems(folder: NamespaceFolder, result: ReturnType<typeof NamespaceValidation.parse>): Problem[] {
  const nsSource = folder.namespaceYaml?.content.toString('utf8');
  const at = (file: string, source: string | undefined, issue: Issue, path: string) => ({
    file,
    line: source === undefined ? 1 : mapIssueToLine(source, { ...issue, path }),
    code: issue.code,
    path: issue.path,
    message: issue.message,
  });
  const out: Problem[] = result.namespaceYaml.map((issue) =>
    at('namespace.yaml', nsSource, issue, issue.path.replace(NS_PREFIX, '')),
  );
  result.flows.forEach((checked, index) => {
    const flow = folder.flows[index]!;
    for (const issue of checked.errors) {
      // A problem of the namespace defaults a flow inherits is reported where it is written.
      if (NS_PREFIX.test(issue.path) && nsSource !== undefined)
        out.push(at('namespace.yaml', nsSource, issue, issue.path.replace(NS_PREFIX, '')));
      else out.push(at(flow.file, flow.source, issue, issue.path));
    }
  });
  return out;
}

async function storedFiles(client: ApiClient, ns: string): Promise<Map<string, string>> {
  const shas = new Map<string, string>();
  let cursor: string | undefined;
  do {
    const page = await client.json('GET', `/namespaces/${ns}/files`, FileList, {
      query: { limit: 500, cursor },
    });
    for (const f of page.files) shas.set(f.path, f.sha256);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return shas;
}

const filePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

async function plan(client: ApiClient, folder: NamespaceFolder): Promise<PlannedChange[]> {
  const ns = encodeURIComponent(folder.namespace);
  const shas = await storedFiles(client, ns);
  const putFile = (path: string, content: Buffer) => () =>
    client.json('PUT', `/namespaces/${ns}/files/${filePath(path)}`, FileWritten, {
      raw: { body: content, contentType: 'application/octet-stream' },
    });
  const fileChange = (path: string, sha256: string): Change =>
    !shas.has(path) ? 'created' : shas.get(path) === sha256 ? 'unchanged' : 'updated';
  const changes: PlannedChange[] = [];
  // namespace.yaml first: the flows were validated against it, and a refusal (403) stores nothing else.
  const nsYaml = folder.namespaceYaml;
  if (nsYaml)
    changes.push({
      kind: 'namespace.yaml',
      file: nsYaml.file,
      change: fileChange('namespace.yaml', nsYaml.sha256),
      put: putFile('namespace.yaml', nsYaml.content),
    });
  for (const f of folder.files)
    changes.push({
      kind: 'file',
      file: f.file,
      change: fileChange(f.path, f.sha256),
      put: putFile(f.path, f.content),
    });
  const flowChanges = await inBatches(folder.flows, async (flow): Promise<PlannedChange> => {
    const path = `/namespaces/${ns}/flows/${encodeURIComponent(flow.id)}`;
    let change: Change = 'created';
    try {
      change = (await client.json('GET', path, Flow)).source === flow.source ? 'unchanged' : 'updated';
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
    const put = () =>
      client.json('PUT', path, Flow, { raw: { body: flow.source, contentType: 'application/yaml' } });
    return { kind: 'flow', file: flow.file, change, put };
  });
  return [...changes, ...flowChanges];
}

export const apply: Command = {
  name: 'apply',
  summary: 'Push a namespace folder',
  usage: `usage: sluice apply <folder> [--namespace NS] [--dry-run]

Pushes a namespace folder in one go:
  <folder>/namespace.yaml     the namespace's defaults and rules (optional)
  <folder>/flows/<id>.yaml    one flow per file; the file name is the flow id
  <folder>/files/**           namespace files, stored under their path below files/
First the server validates namespace.yaml and every flow (nothing is stored
if one is invalid: each problem prints as file:line: code message, exit 1);
then it prints what changes (created, updated, unchanged per file) and stores
the changed ones. Files and flows the server has but the folder lacks stay.

Options:
  --namespace NS    the namespace (default: the folder's name)
  --dry-run         validate and show the changes, store nothing`,

  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals: rest } = parse(args, {
      namespace: { type: 'string' },
      'dry-run': { type: 'boolean' },
    });
    if (values.help) return printHelp(io, this);
    const [dir] = positionals(rest, ['folder']);
    const format = outputFormat(values.output);
    const folder = readNamespaceFolder(dir!, values.namespace);
    const client = connect(values, io);
    const ns = encodeURIComponent(folder.namespace);
    const checked = await client.json('POST', `/namespaces/${ns}/validate`, NamespaceValidation, {
      json: {
        ...(folder.namespaceYaml ? { namespaceYaml: folder.namespaceYaml.content.toString('utf8') } : {}),
        flows: folder.flows.map(({ id, source }) => ({ id, source })),
      },
    });
    if (!checked.valid) {
      const found = problems(folder, checked);
      if (format === 'json') printJson(io, { namespace: folder.namespace, valid: false, problems: found });
      else
        for (const p of found)
          io.err(`${p.file}:${p.line}: ${p.code} ${p.path ? `${p.path}: ` : ''}${p.message}\n`);
      const files = new Set(found.map((p) => p.file)).size;
      throw new CliError(
        `${found.length} problem${found.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}; nothing stored`,
      );
    }
    const changes = await plan(client, folder);
    const dryRun = values['dry-run'] === true;
    if (!dryRun) for (const c of changes) if (c.change !== 'unchanged') await c.put();
    const count = (change: Change) => changes.filter((c) => c.change === change).length;
    if (format === 'json') {
      printJson(io, {
        namespace: folder.namespace,
        valid: true,
        dryRun,
        changes: changes.map(({ kind, file, change }) => ({ kind, file, change })),
      });
      return 0;
    }
    io.out(`namespace ${folder.namespace}${dryRun ? ' (dry run: nothing stored)' : ''}\n`);
    for (const c of changes) io.out(`  ${c.change.padEnd(9)}  ${c.file}\n`);
    io.out(`${count('created')} created, ${count('updated')} updated, ${count('unchanged')} unchanged\n`);
    return 0;
  },
};
