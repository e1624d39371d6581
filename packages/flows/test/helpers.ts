import type { ValidationIssue } from '@sluice/protocol';
import { parseFlow, validateFlowFile, type Flow, type NamespaceConfig } from '@sluice/flows';

export const CTX = { namespace: 'team', flowId: 'nightly' };

/** The flow of docs/flow-file.md#example (the same YAML; the comments differ). */
export const DESIGN_EXAMPLE = `
# namespaces/<ns>/flows/<flow>.yaml — the flow's id is its file name
executor:                  # optional; merged field by field: task > flow > namespace.yaml defaults.executor > instance default
  type: process            # process | docker | kubernetes (inline is never chosen here)
  pool: default
retry: { max_attempts: 3, backoff: 10s }
timeout: 30m               # per task run unless a task sets its own
concurrency: 2             # executions of this flow at once
max_parallel: 4            # task runs of one execution at once
schedule: "*/5 * * * *"    # optional cron; the scheduler starts due executions
tasks:
  - id: fetch
    type: command
    command: ["sh", "-c", "echo rows=42 >> \\"$SLUICE_OUTPUTS\\""]
    env:
      API_TOKEN: { secret: api-token }   # resolved only by the runner API
  - id: report
    type: script
    interpreter: bash      # bash | sh | python (via uv) | node | bun
    script: |
      echo "fetched {{ outputs.fetch.rows }} rows"
    depends_on: [fetch]
    executor: { type: docker, image: debian:bookworm-slim, resources: { cpu: "0.5", memory: 256Mi } }
  - id: notify
    type: http             # inline; an executor block here is executor_not_allowed
    request: { method: POST, url: "https://example.test/hook", body: { rows: "{{ outputs.fetch.rows }}" } }
    depends_on: [report]
`;

export function parseOk(yaml: string): Flow {
  const result = parseFlow(yaml, CTX);
  if (!result.ok)
    throw new Error(`expected the flow to parse, got ${JSON.stringify(result.errors, null, 2)}`);
  return result.flow;
}

export function errorsOf(yaml: string, namespaceConfig?: NamespaceConfig): ValidationIssue[] {
  const result = validateFlowFile(yaml, CTX, namespaceConfig);
  if (result.ok) throw new Error('expected validation errors, the flow is valid');
  return result.errors;
}

/** `[code, path]` pairs, for exact comparisons that ignore message wording. */
export function codesAndPaths(errors: readonly ValidationIssue[]): [string, string][] {
  return errors.map((e) => [e.code, e.path]);
}
