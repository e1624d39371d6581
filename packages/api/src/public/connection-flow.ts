import { Document, parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import {
  AirbyteCatalog,
  configureCatalog,
  streamKey,
  type ConfiguredAirbyteCatalog,
  type StreamSelection,
} from '@sluice/connector-protocol';
import {
  validateFlowFile,
  type Flow,
  type NamespaceConfig,
  type SyncTask,
  type ValidationCode,
} from '@sluice/flows';
import type { ValidationIssue } from '@sluice/protocol';
import { ConnectionBody } from '@sluice/api-schemas';

/**
 * A connection ⇄ its flow (docs/api.md#connections): `connection: true`, the
 * connection's schedule, `concurrency: 1` (two syncs of one connection at
 * once would race on its state) and one task `sync` of type sync holding the
 * source, destination, configured catalog and executor block.
 */
export const SYNC_TASK_ID = 'sync';

const TASK_PATH = `tasks[0]`;

export type BuiltFlow = { ok: true; yaml: string; flow: Flow } | { ok: false; errors: ValidationIssue[] };

type ZodIssue = z.core.$ZodIssue;

const pathOf = (segments: readonly PropertyKey[]) =>
  segments.reduce<string>(
    (out, s) => (typeof s === 'number' ? `${out}[${s}]` : out === '' ? String(s) : `${out}.${String(s)}`),
    '',
  );

/** zod's issues in the validator's codes (packages/flows/src/issues.ts), prefixed by `base`. */
function issuesOf(issues: readonly ZodIssue[], base: readonly PropertyKey[]): ValidationIssue[] {
  return issues.flatMap((i): ValidationIssue[] => {
    const at = [...base, ...i.path];
    if (i.code === 'unrecognized_keys')
      return i.keys.map((key) => ({
        code: 'unknown_field',
        path: pathOf([...at, key]),
        message: `unknown field "${key}"`,
      }));
    const code: ValidationCode =
      i.code === 'invalid_type' ? (i.input === undefined ? 'required' : 'invalid_type') : 'invalid_value';
    return [{ code, path: pathOf(at), message: i.message }];
  });
}

/** A flow validator's issue of the generated flow, at the body's path (`tasks[0].source.image` → `source.image`). */
function bodyIssue(issue: ValidationIssue): ValidationIssue {
  const strip = (s: string) => s.split(`${TASK_PATH}.`).join('').split(` (task ${SYNC_TASK_ID})`).join('');
  const path =
    issue.path === TASK_PATH ? '' : issue.path.startsWith(`${TASK_PATH}.`) ? strip(issue.path) : issue.path;
  return { ...issue, path, message: strip(issue.message) };
}

/** Selection errors of the catalog builder at `streams[i].<field>`, i the selection they name. */
function selectionIssues(
  errors: ReadonlyArray<{ stream: string; field: string; message: string }>,
  selections: readonly StreamSelection[],
): ValidationIssue[] {
  const keys = selections.map((s) => streamKey(s.name, s.namespace));
  let from = 0;
  return errors.map((e) => {
    // The builder reports in selection order, so the next selection of that key is the one meant.
    const index = keys.indexOf(e.stream, from);
    if (index === -1 || e.field === 'streams')
      return { code: 'invalid_value', path: 'streams', message: e.message };
    from = index;
    return {
      code: 'invalid_value',
      path: `streams[${index}].${e.field}`,
      message: `${e.stream}: ${e.message}`,
    };
  });
}

const dedupe = (issues: ValidationIssue[]) => {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.code}\u0000${i.path}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
};

function withoutUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/**
 * The flow of a connection body, validated by the flow validator like any
 * flow file, with every problem of the body at once. `known` is the catalog
 * of the connection being replaced: a PUT without `catalog` selects from it.
 */
export function buildConnectionFlow(
  raw: unknown,
  ctx: { namespace: string; name: string },
  namespaceConfig: NamespaceConfig | undefined,
  known?: ConfiguredAirbyteCatalog,
): BuiltFlow {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return {
      ok: false,
      errors: [{ code: 'invalid_type', path: '', message: 'the body must be a JSON object (a connection)' }],
    };
  const body = raw as Record<string, unknown>;
  const shape = ConnectionBody.shape;
  const errors: ValidationIssue[] = [];
  for (const key of Object.keys(body))
    if (!(key in shape)) errors.push({ code: 'unknown_field', path: key, message: `unknown field "${key}"` });
  if (body.schedule === undefined)
    errors.push({ code: 'required', path: 'schedule', message: 'a connection needs a schedule (cron)' });

  let catalog: z.output<typeof AirbyteCatalog> | undefined;
  if (body.catalog !== undefined) {
    const given = AirbyteCatalog.safeParse(body.catalog, { reportInput: true });
    if (given.success) catalog = given.data;
    else errors.push(...issuesOf(given.error.issues, ['catalog']));
  } else if (known) {
    catalog = { streams: known.streams.map((s) => s.stream) };
  } else {
    errors.push({
      code: 'required',
      path: 'catalog',
      message: 'the discovered catalog (a discover task\u2019s result) the streams are selected from',
    });
  }
  const streams = shape.streams.safeParse(body.streams, { reportInput: true });
  if (!streams.success) errors.push(...issuesOf(streams.error.issues, ['streams']));

  let configured: ConfiguredAirbyteCatalog | undefined;
  if (catalog && streams.success) {
    const selections: StreamSelection[] = streams.data.map((s) => ({
      ...s,
      ...(s.namespace == null ? { namespace: undefined } : { namespace: s.namespace }),
    }));
    const result = configureCatalog(catalog, selections);
    if (result.ok) configured = result.catalog;
    else errors.push(...selectionIssues(result.errors, selections));
  }

  const doc = new Document(
    withoutUndefined({
      connection: true,
      schedule: body.schedule,
      concurrency: 1,
      tasks: [
        withoutUndefined({
          id: SYNC_TASK_ID,
          type: 'sync',
          executor: body.executor,
          retry: body.retry,
          timeout: body.timeout,
          source: body.source,
          destination: body.destination,
          catalog: configured,
        }),
      ],
    }),
    // The catalog builder shares arrays between fields: written out, not as YAML aliases (which the validator limits).
    { aliasDuplicateObjects: false },
  );
  doc.commentBefore = ` The flow of connection ${ctx.namespace}/${ctx.name}: written by the connections API\n (PUT /api/v1/namespaces/${ctx.namespace}/connections/${ctx.name}), not by the flows API.`;
  const yaml = doc.toString();
  const parsed = validateFlowFile(yaml, { namespace: ctx.namespace, flowId: ctx.name }, namespaceConfig);
  if (!parsed.ok) errors.push(...parsed.errors.map(bodyIssue));
  if (errors.length > 0 || !parsed.ok) return { ok: false, errors: dedupe(errors) };
  return { ok: true, yaml, flow: parsed.flow };
}

/** The sync task of a connection's flow, or null when the flow is not (or no longer) one. */
export function syncTaskOf(definition: unknown): SyncTask | null {
  const flow = definition as Partial<Flow> | null;
  if (!flow || flow.connection !== true || !Array.isArray(flow.tasks)) return null;
  const task = flow.tasks.find((t) => t.id === SYNC_TASK_ID);
  return task?.type === 'sync' ? task : null;
}

export function configuredCatalogOf(task: SyncTask): ConfiguredAirbyteCatalog {
  const catalog = task.catalog as ConfiguredAirbyteCatalog | undefined;
  return catalog && Array.isArray(catalog.streams) ? catalog : { streams: [] };
}

/** The connection as its flow holds it: the fields of the body, read back. */
export function connectionOfFlow(
  ns: { namespace: string },
  row: { flowId: string; source: string; definition: unknown; schedule: string | null; updatedAt: Date },
) {
  const task = syncTaskOf(row.definition);
  if (!task) return null;
  // The executor, retry and timeout as written (the definition holds them converted to engine units).
  const written = parseYaml(row.source) as { tasks?: Array<Record<string, unknown>> } | null;
  const rawTask = written?.tasks?.[0] ?? {};
  const catalog = configuredCatalogOf(task);
  return withoutUndefined({
    namespace: ns.namespace,
    name: row.flowId,
    source: task.source,
    destination: task.destination,
    streams: catalog.streams.map((s) =>
      withoutUndefined({
        name: s.stream.name,
        namespace: s.stream.namespace ?? undefined,
        syncMode: s.sync_mode,
        destinationSyncMode: s.destination_sync_mode,
        cursorField: s.cursor_field,
        primaryKey: s.primary_key,
      }),
    ),
    catalog,
    schedule: row.schedule ?? '',
    executor: rawTask.executor,
    retry: rawTask.retry,
    timeout: rawTask.timeout,
    updatedAt: row.updatedAt,
  });
}
