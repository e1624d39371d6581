import {
  parseNamespaceConfig,
  resolveExecutor,
  validateFlowAgainstNamespace,
  validateFlowFile,
  type NamespaceConfig,
} from '@sluice/flows';
import { codesAndPaths, CTX, DESIGN_EXAMPLE, errorsOf, parseOk } from './helpers';

function namespaceConfig(yaml: string): NamespaceConfig {
  const result = parseNamespaceConfig(yaml);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.config;
}

function resolveAll(flowYaml: string, namespaceYaml?: string) {
  const flow = parseOk(flowYaml);
  const defaults =
    namespaceYaml === undefined ? undefined : namespaceConfig(namespaceYaml).defaults?.executor;
  expect(validateFlowAgainstNamespace(flow, { defaults: { executor: defaults } })).toEqual([]);
  return Object.fromEntries(flow.tasks.map((t) => [t.id, resolveExecutor(t, flow, defaults)]));
}

describe('resolveExecutor on the DESIGN.md example', () => {
  it('runs fetch on the flow executor, report in docker with image and resources, notify inline', () => {
    expect(resolveAll(DESIGN_EXAMPLE)).toEqual({
      fetch: { type: 'process', pool: 'default' },
      report: {
        type: 'docker',
        pool: 'default',
        image: 'debian:bookworm-slim',
        resources: { cpu: '0.5', memory: '256Mi' },
        inject_runner: true,
      },
      notify: { type: 'inline', pool: '' },
    });
  });
});

describe('the four-level merge', () => {
  const flow = `
executor: { type: kubernetes, image: "ghcr.io/acme/etl:1", service_account: etl }
tasks:
  - { id: plain, type: command, command: [etl] }
  - { id: on_gpu, type: command, command: [train], executor: { pool: gpu } }
  - { id: own_image, type: command, command: [x], executor: { image: "busybox:1", inject_runner: false } }
  - { id: call, type: subflow, flow: other }
`;

  it('lets a task set only pool and keep the flow type, image and other fields', () => {
    const resolved = resolveAll(flow);
    expect(resolved.on_gpu).toEqual({
      type: 'kubernetes',
      pool: 'gpu',
      image: 'ghcr.io/acme/etl:1',
      service_account: 'etl',
      inject_runner: true,
    });
    expect(resolved.own_image).toMatchObject({
      type: 'kubernetes',
      pool: 'default',
      image: 'busybox:1',
      inject_runner: false,
    });
    expect(resolved.call).toEqual({ type: 'inline', pool: '' });
  });

  it('applies namespace defaults below the flow, and the instance default (process, default) below everything', () => {
    const resolved = resolveAll(
      `
executor: { pool: batch }
tasks:
  - { id: a, type: command, command: [ls] }
  - { id: b, type: command, command: [ls], executor: { type: process } }
`,
      'defaults:\n  executor: { type: docker, image: "alpine:3", pool: shared, pull: never }\n',
    );
    expect(resolved.a).toEqual({
      type: 'docker',
      pool: 'batch',
      image: 'alpine:3',
      pull: 'never',
      inject_runner: true,
    });
    // b switches to process: the namespace's docker-only fields do not follow it there.
    expect(resolved.b).toEqual({ type: 'process', pool: 'batch' });
    expect(resolveAll('tasks:\n  - { id: a, type: command, command: [ls] }').a).toEqual({
      type: 'process',
      pool: 'default',
    });
  });
});

describe('merged-result validation', () => {
  it('requires an image for docker and kubernetes, at the level that chose the type', () => {
    const errors = errorsOf(`
executor: { type: docker }
tasks:
  - { id: a, type: command, command: [ls] }
  - { id: b, type: command, command: [ls], executor: { type: kubernetes } }
  - { id: c, type: script, script: x }
  - { id: d, type: command, command: [ls], executor: { image: "alpine:3" } }
`);
    expect(codesAndPaths(errors)).toEqual([
      ['image_required', 'executor.image'],
      ['image_required', 'tasks[1].executor.image'],
    ]);
    expect(errors[0]?.message).toBe('a docker executor needs an image (tasks a, c)');
  });

  it('reports a field the merged type does not accept at the level where it was set', () => {
    const flow = `
executor: { pull: always }
tasks:
  - { id: a, type: command, command: [ls], executor: { node_selector: { disk: ssd } } }
  - { id: b, type: command, command: [ls], executor: { type: process } }
`;
    const errors = errorsOf(
      flow,
      namespaceConfig('defaults:\n  executor: { type: kubernetes, image: "alpine:3" }\n'),
    );
    expect(codesAndPaths(errors)).toEqual([['field_not_allowed', 'executor.pull']]);
    expect(errors[0]?.message).toContain('its type is set at namespace.yaml:defaults.executor.type (task a)');
    // b chose process itself, so the flow's pull does not follow it; a kept kubernetes, where node_selector is fine.
  });

  it('reports a namespace-level field that the instance default (process) does not accept', () => {
    const errors = errorsOf(
      'tasks:\n  - { id: a, type: command, command: [ls] }\n',
      namespaceConfig('defaults:\n  executor: { pull: if_not_present, resources: { cpu: 1 } }\n'),
    );
    expect(codesAndPaths(errors)).toEqual([
      ['field_not_allowed', 'namespace.yaml:defaults.executor.resources'],
      ['field_not_allowed', 'namespace.yaml:defaults.executor.pull'],
    ]);
  });

  it('reports a task-level field that its inherited type does not accept', () => {
    const errors = errorsOf(`
executor: { type: docker, image: "alpine:3" }
tasks:
  - { id: a, type: command, command: [ls], executor: { service_account: etl } }
`);
    expect(codesAndPaths(errors)).toEqual([['field_not_allowed', 'tasks[0].executor.service_account']]);
  });

  it('needs a connector image on docker and kubernetes, and a command on process', () => {
    const errors = errorsOf(`
tasks:
  - { id: spec, type: connector, operation: spec, connector: { image: "acme/source-pg:1" } }
  - id: sync
    type: sync
    executor: { type: kubernetes, image: "sluice/runner:1" }
    source: { command: [source-pg] }
    destination: { image: "acme/dest-s3:1" }
`);
    expect(codesAndPaths(errors)).toEqual([
      ['required', 'tasks[0].connector.command'],
      ['image_required', 'tasks[1].source.image'],
    ]);
  });

  it('does not ask connector and sync tasks for an executor image of their own', () => {
    const yaml =
      'tasks:\n  - { id: c, type: connector, operation: check, connector: { image: x }, executor: { type: docker } }';
    expect(validateFlowFile(yaml, CTX)).toMatchObject({ ok: true });
  });
});

describe('parseNamespaceConfig', () => {
  it('reads defaults.executor', () => {
    expect(
      namespaceConfig('defaults:\n  executor: { type: docker, image: "alpine:3", pull: always }\n'),
    ).toEqual({
      defaults: { executor: { type: 'docker', image: 'alpine:3', pull: 'always' } },
    });
    expect(namespaceConfig('')).toEqual({});
  });

  it('reports unknown fields, bad types and self-contradicting blocks with namespace.yaml paths', () => {
    const result = parseNamespaceConfig(
      'defaults:\n  executer: {}\n  executor: { type: kubernetes, image: x, pull: always }\nowner: me\n',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(codesAndPaths(result.errors)).toEqual([
      ['unknown_field', 'namespace.yaml:defaults.executer'],
      ['unknown_field', 'namespace.yaml:owner'],
    ]);
    const contradicting = parseNamespaceConfig(
      'defaults:\n  executor: { type: kubernetes, image: x, pull: always }\n',
    );
    expect(contradicting.ok || codesAndPaths(contradicting.errors)).toEqual([
      ['field_not_allowed', 'namespace.yaml:defaults.executor.pull'],
    ]);
    const inline = parseNamespaceConfig('defaults:\n  executor: { type: inline }\n');
    expect(inline.ok || codesAndPaths(inline.errors)).toEqual([
      ['invalid_executor_type', 'namespace.yaml:defaults.executor.type'],
    ]);
  });

  it('reports YAML syntax errors against the file', () => {
    const result = parseNamespaceConfig('defaults: [\n');
    expect(result.ok || codesAndPaths(result.errors)[0]).toEqual(['yaml_syntax', 'namespace.yaml']);
  });
});
