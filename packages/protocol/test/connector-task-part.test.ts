import { RunnerTaskSpec } from '@sluice/protocol';

const base = {
  taskRunId: 'tr',
  executionId: 'ex',
  taskId: 't',
  attempt: 1,
  fence: 1,
  env: {},
  timeoutMs: 1000,
  heartbeatIntervalMs: 100,
  cancelGraceMs: 100,
  snapshot: null,
  limits: { artifactMaxBytes: 1, artifactsTotalMaxBytes: 1, outputValueMaxBytes: 1, logLineMaxBytes: 1 },
};

test('a connector task part carries its operation, command or image, and the resolved config as sent', () => {
  const task = {
    type: 'connector',
    operation: 'discover',
    command: ['node', 'main.cjs'],
    config: { nested: { list: [1, { password: 'resolved' }] } },
  };
  expect(RunnerTaskSpec.parse({ ...base, task }).task).toEqual(task);
  const image = { type: 'connector', operation: 'spec', image: 'airbyte/source-faker:6', config: {} };
  expect(RunnerTaskSpec.parse({ ...base, task: image }).task).toEqual(image);
});

test('a connector task part without a command or an image, or with an unknown operation, is refused', () => {
  const neither = RunnerTaskSpec.safeParse({
    ...base,
    task: { type: 'connector', operation: 'check', config: {} },
  });
  expect(neither.success).toBe(false);
  expect(JSON.stringify(neither.error?.issues)).toContain('a connector task needs a command or an image');
  const read = RunnerTaskSpec.safeParse({
    ...base,
    task: { type: 'connector', operation: 'read', command: ['x'], config: {} },
  });
  expect(read.success).toBe(false);
});
