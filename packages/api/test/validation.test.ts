import request from 'supertest';
import { startApiHarness, putFlow, type ApiHarness } from './harness';

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness();
});
afterAll(() => h.close());

async function expectRejected(yaml: string, code: string, path: string) {
  const res = await putFlow(h, 'ns', 'bad', yaml);
  expect(res.status).toBe(422);
  expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ code, path })]));
  const stored = await request(h.publicApp)
    .get('/api/v1/namespaces/ns/flows/bad')
    .set('Authorization', `Bearer ${h.adminToken}`);
  expect(stored.status).toBe(404);
  return res.body.errors as Array<{ code: string; path: string; message: string }>;
}

describe('PUT flow validation', () => {
  it('stores a valid flow', async () => {
    const res = await putFlow(
      h,
      'ns',
      'good',
      'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n',
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ namespace: 'ns', id: 'good' });
  });

  it('image_required: a docker task without an image', async () => {
    await expectRejected(
      'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n    executor: { type: docker }\n',
      'image_required',
      'tasks[0].executor.image',
    );
  });

  it('field_not_allowed: pull on a kubernetes block', async () => {
    await expectRejected(
      'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n    executor: { type: kubernetes, image: alpine, pull: always }\n',
      'field_not_allowed',
      'tasks[0].executor.pull',
    );
  });

  it('executor_not_allowed: an http task with an executor block', async () => {
    await expectRejected(
      'tasks:\n  - id: a\n    type: http\n    request: { url: "http://x.test" }\n    executor: { type: process }\n',
      'executor_not_allowed',
      'tasks[0].executor',
    );
  });

  it('an unknown task type', async () => {
    await expectRejected('tasks:\n  - id: a\n    type: teleport\n', 'unknown_task_type', 'tasks[0].type');
  });

  it('a dependency cycle', async () => {
    const errors = await expectRejected(
      'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n    depends_on: [b]\n  - id: b\n    type: command\n    command: ["true"]\n    depends_on: [a]\n',
      'dependency_cycle',
      expect.any(String) as unknown as string,
    );
    expect(errors.find((e) => e.code === 'dependency_cycle')?.message).toMatch(/a .*b|b .*a/);
  });

  it('malformed YAML', async () => {
    await expectRejected('tasks: [\n  - id: a\n', 'yaml_syntax', '');
  });

  it('a namespace.yaml default that makes a task invalid is reported against the flow', async () => {
    const ns = await request(h.publicApp)
      .put('/api/v1/namespaces/ns2/files/namespace.yaml')
      .set('Authorization', `Bearer ${h.adminToken}`)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('defaults:\n  executor: { type: docker }\n'));
    expect(ns.status).toBe(200);
    const res = await putFlow(h, 'ns2', 'f', 'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n');
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('image_required');
  });

  it('an invalid namespace.yaml is refused with 422', async () => {
    const res = await request(h.publicApp)
      .put('/api/v1/namespaces/ns3/files/namespace.yaml')
      .set('Authorization', `Bearer ${h.adminToken}`)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('defaults:\n  executr: {}\n'));
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ code: 'unknown_field' });
  });
});

describe('authentication', () => {
  it('refuses calls without a token, with a bad token, and admin calls from members', async () => {
    expect((await request(h.publicApp).get('/api/v1/executors')).status).toBe(401);
    expect(
      (await request(h.publicApp).get('/api/v1/executors').set('Authorization', 'Bearer nope')).status,
    ).toBe(401);
    const member = await request(h.publicApp)
      .get('/api/v1/instances')
      .set('Authorization', `Bearer ${h.memberToken}`);
    expect(member.status).toBe(403);
    expect(member.body.error.code).toBe('forbidden');
    const admin = await request(h.publicApp)
      .get('/api/v1/instances')
      .set('Authorization', `Bearer ${h.adminToken}`);
    expect(admin.status).toBe(200);
  });
});

describe('PUT flow validation: fields inherited into the merged executor block', () => {
  async function putNamespaceYaml(namespace: string, yaml: string) {
    const res = await request(h.publicApp)
      .put(`/api/v1/namespaces/${namespace}/files/namespace.yaml`)
      .set('Authorization', `Bearer ${h.adminToken}`)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from(yaml));
    expect(res.status).toBe(200);
  }

  async function expectNotStored(namespace: string, flow: string) {
    const stored = await request(h.publicApp)
      .get(`/api/v1/namespaces/${namespace}/flows/${flow}`)
      .set('Authorization', `Bearer ${h.adminToken}`);
    expect(stored.status).toBe(404);
  }

  it("a namespace kubernetes service_account under a task's docker block is field_not_allowed naming namespace.yaml", async () => {
    await putNamespaceYaml(
      'inherit',
      'defaults:\n  executor: { type: kubernetes, image: "etl:1", service_account: etl }\n',
    );
    const res = await putFlow(
      h,
      'inherit',
      'f',
      'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n    executor: { type: docker, image: busybox }\n',
    );
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      {
        code: 'field_not_allowed',
        path: 'tasks[0].executor.service_account',
        message: expect.stringContaining(
          '"service_account" (set by namespace.yaml defaults.executor) is not accepted by the docker executor',
        ) as unknown as string,
      },
    ]);
    await expectNotStored('inherit', 'f');
  });

  it("a flow-level pull under a task's kubernetes block is field_not_allowed naming the flow's executor", async () => {
    const res = await putFlow(
      h,
      'inherit2',
      'f',
      'executor: { type: docker, image: alpine, pull: always }\ntasks:\n  - id: a\n    type: command\n    command: ["true"]\n    executor: { type: kubernetes }\n',
    );
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ code: 'field_not_allowed', path: 'tasks[0].executor.pull' }),
    ]);
    expect(res.body.errors[0].message).toContain("(set by the flow's executor)");
    await expectNotStored('inherit2', 'f');
  });
});
