import request from 'supertest';
import { putFlow, startApiHarness, type ApiHarness } from './harness';

/*
 * A flow is validated against namespace.yaml when it is stored, and again when
 * an execution starts: namespace.yaml may have changed in between. A flow the
 * current namespace.yaml makes invalid is refused with the validator's 422 and
 * nothing is created.
 */
let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness();
});
afterAll(() => h.close());

const putNamespaceYaml = (namespace: string, yaml: string) =>
  request(h.publicApp)
    .put(`/api/v1/namespaces/${namespace}/files/namespace.yaml`)
    .set('Authorization', `Bearer ${h.adminToken}`)
    .set('Content-Type', 'application/octet-stream')
    .send(Buffer.from(yaml));

const executionsOf = async (namespace: string): Promise<number> =>
  Number(
    (
      await h.pool.query<{ n: string }>('SELECT count(*) AS n FROM executions WHERE namespace = $1', [
        namespace,
      ])
    ).rows[0]!.n,
  );

test('a namespace.yaml changed after the PUT makes the start a 422 with the issue, and nothing is created', async () => {
  expect(
    (await putNamespaceYaml('later', 'defaults:\n  executor: { type: docker, image: busybox }\n')).status,
  ).toBe(200);
  const flow = 'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n';
  expect((await putFlow(h, 'later', 'f', flow)).status).toBe(200);
  // The image goes away: the task's merged docker block has none now.
  expect((await putNamespaceYaml('later', 'defaults:\n  executor: { type: docker }\n')).status).toBe(200);

  const res = await request(h.publicApp)
    .post('/api/v1/namespaces/later/flows/f/executions')
    .set('Authorization', `Bearer ${h.memberToken}`);
  expect(res.status).toBe(422);
  expect(res.body.errors).toEqual([
    expect.objectContaining({ code: 'image_required', path: expect.any(String) }),
  ]);
  expect(await executionsOf('later')).toBe(0);

  // Valid again: the start goes through.
  expect(
    (await putNamespaceYaml('later', 'defaults:\n  executor: { type: docker, image: busybox }\n')).status,
  ).toBe(200);
  const ok = await request(h.publicApp)
    .post('/api/v1/namespaces/later/flows/f/executions')
    .set('Authorization', `Bearer ${h.memberToken}`);
  expect(ok.status).toBe(201);
  expect(await executionsOf('later')).toBe(1);
});
