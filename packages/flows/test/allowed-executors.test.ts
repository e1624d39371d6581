import {
  assertExecutorTypesAllowed,
  ExecutorTypeNotAllowedError,
  parseNamespaceConfig,
  validateFlowFile,
  type NamespaceConfig,
} from '@sluice/flows';
import { codesAndPaths, CTX, parseOk } from './helpers';

function namespaceConfig(yaml: string): NamespaceConfig {
  const result = parseNamespaceConfig(yaml);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.config;
}

const NO_PROCESS = 'allowed_executors: [docker, kubernetes]\n';

const FLOW = `
tasks:
  - { id: plain, type: command, command: [etl] }
  - { id: boxed, type: command, command: [x], executor: { type: docker, image: "alpine:3" } }
  - { id: call, type: subflow, flow: other }
  - id: hook
    type: http
    request: { method: GET, url: "http://example.test/" }
`;

describe('namespace.yaml allowed_executors', () => {
  it('parses a list of executor types; an empty list, an unknown type or inline is refused', () => {
    expect(namespaceConfig(NO_PROCESS)).toEqual({ allowed_executors: ['docker', 'kubernetes'] });
    const bad = (yaml: string) => {
      const result = parseNamespaceConfig(yaml);
      return result.ok ? [] : codesAndPaths(result.errors);
    };
    expect(bad('allowed_executors: []\n')[0]?.[1]).toBe('namespace.yaml:allowed_executors');
    expect(bad('allowed_executors: [docker, lambda]\n')).toEqual([
      ['invalid_executor_type', 'namespace.yaml:allowed_executors[1]'],
    ]);
    expect(bad('allowed_executors: [inline]\n')).toEqual([
      ['invalid_executor_type', 'namespace.yaml:allowed_executors[0]'],
    ]);
  });

  it('refuses a defaults.executor.type the list leaves out', () => {
    const result = parseNamespaceConfig(`${NO_PROCESS}defaults:\n  executor: { type: process }\n`);
    expect(result.ok || codesAndPaths(result.errors)).toEqual([
      ['executor_type_not_allowed', 'namespace.yaml:defaults.executor.type'],
    ]);
  });

  it('refuses a flow with a task on the instance default (process), naming the rule; inline tasks are unaffected', () => {
    const result = validateFlowFile(FLOW, CTX, namespaceConfig(NO_PROCESS));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(codesAndPaths(result.errors)).toEqual([['executor_type_not_allowed', 'tasks[0].executor.type']]);
    expect(result.errors[0]?.message).toContain(
      'the process executor is not allowed in this namespace (namespace.yaml allowed_executors: docker, kubernetes)',
    );
    expect(result.errors[0]?.message).toContain('(task plain)');
  });

  it('reports a process type chosen at flow level once, at that level', () => {
    const flow = `executor: { type: process }\ntasks:\n  - { id: a, type: command, command: [a] }\n  - { id: b, type: command, command: [b] }\n`;
    const result = validateFlowFile(flow, CTX, namespaceConfig(NO_PROCESS));
    expect(result.ok || codesAndPaths(result.errors)).toEqual([
      ['executor_type_not_allowed', 'executor.type'],
    ]);
  });

  it('accepts the flow once its tasks run on allowed types (a namespace default docker)', () => {
    const config = namespaceConfig(
      `${NO_PROCESS}defaults:\n  executor: { type: docker, image: "alpine:3" }\n`,
    );
    expect(validateFlowFile(FLOW, CTX, config).ok).toBe(true);
    expect(validateFlowFile(FLOW, CTX, namespaceConfig('allowed_executors: [process, docker]\n')).ok).toBe(
      true,
    );
  });

  it('refuses at execution start a stored flow the rule now leaves out', () => {
    const flow = parseOk(FLOW);
    expect(() => assertExecutorTypesAllowed(flow, namespaceConfig(NO_PROCESS), 'etl')).toThrow(
      ExecutorTypeNotAllowedError,
    );
    try {
      assertExecutorTypesAllowed(flow, namespaceConfig(NO_PROCESS), 'etl');
    } catch (err) {
      expect(err).toMatchObject({ status: 422, code: 'executor_type_not_allowed' });
      expect((err as Error).message).toMatch(
        /^namespace etl: tasks\[0\]\.executor\.type: the process executor/,
      );
    }
    expect(() => assertExecutorTypesAllowed(flow, null, 'etl')).not.toThrow();
    expect(() => assertExecutorTypesAllowed(flow, {}, 'etl')).not.toThrow();
  });
});
