import { validateFlowFile } from '@sluice/flows';
import { codesAndPaths, CTX, errorsOf } from './helpers';

// A sync task's configured catalog is checked for what the runner picks streams by (docs/connectors.md#sync).

const sync = (catalog: string) => `
tasks:
  - id: sync
    type: sync
    source: { command: [src] }
    destination: { command: [dst] }
    catalog: ${catalog}
`;

describe('sync task catalog', () => {
  it('accepts a configured catalog, with fields of its own kept', () => {
    const yaml = sync(
      '{ streams: [{ stream: { name: users, json_schema: {}, x_vendor: 1 }, sync_mode: incremental, destination_sync_mode: append_dedup, cursor_field: [id] }] }',
    );
    expect(validateFlowFile(yaml, CTX)).toMatchObject({ ok: true });
  });

  it('names the stream field that is wrong or missing', () => {
    const errors = errorsOf(
      sync(
        '{ streams: [{ stream: { name: users, json_schema: {} }, sync_mode: sometimes }, { stream: {} }] }',
      ),
    );
    expect(codesAndPaths(errors).map(([, path]) => path)).toEqual(
      expect.arrayContaining([
        'tasks[0].catalog.streams[0].sync_mode',
        'tasks[0].catalog.streams[0].destination_sync_mode',
        'tasks[0].catalog.streams[1].stream.name',
      ]),
    );
  });
});
