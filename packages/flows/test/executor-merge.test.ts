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

/** Each task's resolved executor, after checking that validation reports exactly `issues` ([code, path]). */
function resolveAll(flowYaml: string, namespaceYaml?: string, issues: [string, string][] = []) {
  const flow = parseOk(flowYaml);
  const defaults =
    namespaceYaml === undefined ? undefined : namespaceConfig(namespaceYaml).defaults?.executor;
  expect(codesAndPaths(validateFlowAgainstNamespace(flow, { defaults: { executor: defaults } }))).toEqual(
    issues,
  );
  return Object.fromEntries(flow.tasks.map((t) => [t.id, resolveExecutor(t, flow, defaults)]));
}

describe('resolveExecutor on the example of docs/flow-file.md', () => {
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
      // b switches to process under the namespace's docker-only fields: the merged block is checked.
      [
        ['field_not_allowed', 'tasks[1].executor.image'],
        ['field_not_allowed', 'tasks[1].executor.pull'],
      ],
    );
    expect(resolved.a).toEqual({
      type: 'docker',
      pool: 'batch',
      image: 'alpine:3',
      pull: 'never',
      inject_runner: true,
    });
    // Resolving leaves those fields out rather than handing the process executor an image.
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
    expect(codesAndPaths(errors)).toEqual([
      ['field_not_allowed', 'executor.pull'],
      ['field_not_allowed', 'tasks[1].executor.image'],
      ['field_not_allowed', 'tasks[1].executor.pull'],
    ]);
    expect(errors[0]?.message).toContain('its type is set at namespace.yaml:defaults.executor.type (task a)');
    expect(errors[0]?.message).toContain(
      '"pull" (set by the flow\'s executor) is not accepted by the kubernetes',
    );
    // a kept kubernetes, where node_selector is fine; b chose process, under the flow's pull and the namespace's image.
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
    expect(errors[1]?.message).toBe(
      '"pull" (set by namespace.yaml defaults.executor) is not accepted by the process executor, which takes type, pool; its type is the instance default (task a)',
    );
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

describe('fields inherited from above the level that chose the type', () => {
  // One value per type-restricted field, and the types that do not accept it.
  const RESTRICTED: [field: string, value: string, types: string[]][] = [
    ['pull', 'always', ['kubernetes', 'process']],
    ['service_account', 'etl', ['docker', 'process']],
    ['node_selector', '{ disk: ssd }', ['docker', 'process']],
    ['tolerations', '[{ key: gpu, operator: Exists }]', ['docker', 'process']],
    ['image', '"alpine:3"', ['process']],
    ['inject_runner', 'false', ['process']],
    ['resources', '{ cpu: 1 }', ['process']],
  ];
  const cases = RESTRICTED.flatMap(([field, value, types]) =>
    types.flatMap((type) => [
      { level: 'flow', setBy: "the flow's executor", field, value, type },
      { level: 'namespace', setBy: 'namespace.yaml defaults.executor', field, value, type },
    ]),
  );

  it.each(cases)(
    '$field from the $level level under a task of type $type is field_not_allowed, naming the level',
    ({ level, setBy, field, value, type }) => {
      const block = `{ ${field}: ${value} }`;
      const own = type === 'process' ? '{ type: process }' : `{ type: ${type}, image: "busybox:1" }`;
      const task = `  - { id: a, type: command, command: [ls], executor: ${own} }\n`;
      const errors =
        level === 'flow'
          ? errorsOf(`executor: ${block}\ntasks:\n${task}`)
          : errorsOf(`tasks:\n${task}`, namespaceConfig(`defaults:\n  executor: ${block}\n`));
      expect(codesAndPaths(errors)).toEqual([['field_not_allowed', `tasks[0].executor.${field}`]]);
      expect(errors[0]?.message).toContain(
        `"${field}" (set by ${setBy}) is not accepted by the ${type} executor`,
      );
      expect(errors[0]?.message).toContain('its type is set at tasks[0].executor.type (task a)');
    },
  );

  it("reports a namespace kubernetes service_account under a task's docker block, and resolves without it", () => {
    const namespace = 'defaults:\n  executor: { type: kubernetes, image: "etl:1", service_account: etl }\n';
    const flow =
      'tasks:\n  - { id: a, type: command, command: [ls], executor: { type: docker, image: busybox } }\n';
    const errors = errorsOf(flow, namespaceConfig(namespace));
    expect(errors).toEqual([
      {
        code: 'field_not_allowed',
        path: 'tasks[0].executor.service_account',
        message:
          '"service_account" (set by namespace.yaml defaults.executor) is not accepted by the docker executor, which takes type, pool, image, inject_runner, resources, pull; its type is set at tasks[0].executor.type (task a)',
      },
    ]);
    const defaults = namespaceConfig(namespace).defaults?.executor;
    const task = parseOk(flow).tasks[0];
    expect(task && resolveExecutor(task, parseOk(flow), defaults)).toEqual({
      type: 'docker',
      pool: 'default',
      image: 'busybox',
      inject_runner: true,
    });
  });

  it('reports a flow-level pull inherited by a kubernetes task', () => {
    const errors = errorsOf(`
executor: { type: docker, image: "alpine:3", pull: always }
tasks:
  - { id: a, type: command, command: [ls] }
  - { id: b, type: command, command: [ls], executor: { type: kubernetes } }
`);
    expect(codesAndPaths(errors)).toEqual([['field_not_allowed', 'tasks[1].executor.pull']]);
    expect(errors[0]?.message).toMatch(
      /^"pull" \(set by the flow's executor\) is not accepted by the kubernetes/,
    );
  });

  it('reports a namespace field under a flow-level type once, at the flow block, naming every task', () => {
    const errors = errorsOf(
      `
executor: { type: docker, image: "alpine:3" }
tasks:
  - { id: a, type: command, command: [ls] }
  - { id: b, type: command, command: [ls], executor: { pool: big } }
  - { id: c, type: command, command: [ls], executor: { type: kubernetes } }
`,
      namespaceConfig(
        'defaults:\n  executor: { type: kubernetes, image: "etl:1", node_selector: { disk: ssd } }\n',
      ),
    );
    expect(codesAndPaths(errors)).toEqual([['field_not_allowed', 'executor.node_selector']]);
    expect(errors[0]?.message).toContain('(set by namespace.yaml defaults.executor)');
    expect(errors[0]?.message).toMatch(/its type is set at executor\.type \(tasks a, b\)$/);
  });

  it("still reports a field set in the task's own block where it is written, as before", () => {
    const inheritedType = errorsOf(`
executor: { type: docker, image: "alpine:3" }
tasks:
  - { id: a, type: command, command: [ls], executor: { service_account: etl } }
`);
    expect(inheritedType).toEqual([
      {
        code: 'field_not_allowed',
        path: 'tasks[0].executor.service_account',
        message:
          '"service_account" is not accepted by the docker executor, which takes type, pool, image, inject_runner, resources, pull; its type is set at executor.type (task a)',
      },
    ]);
    const ownType = errorsOf(
      'tasks:\n  - { id: a, type: command, command: [ls], executor: { type: kubernetes, image: x, pull: always } }\n',
    );
    expect(ownType).toEqual([
      {
        code: 'field_not_allowed',
        path: 'tasks[0].executor.pull',
        message:
          '"pull" is not accepted by the kubernetes executor, which takes type, pool, image, inject_runner, resources, node_selector, tolerations, service_account',
      },
    ]);
  });

  it('accepts inherited fields that the merged type takes', () => {
    const resolved = resolveAll(
      `
executor: { service_account: etl, node_selector: { disk: ssd } }
tasks:
  - { id: a, type: command, command: [ls], executor: { type: kubernetes, image: "etl:1" } }
`,
      'defaults:\n  executor: { type: docker, image: "alpine:3", resources: { memory: 1Gi } }\n',
    );
    expect(resolved.a).toEqual({
      type: 'kubernetes',
      pool: 'default',
      image: 'etl:1',
      resources: { memory: '1Gi' },
      node_selector: { disk: 'ssd' },
      service_account: 'etl',
      inject_runner: true,
    });
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
