import { parseFlow } from '@sluice/flows';
import { CTX } from './helpers';

// `connection: true` marks a connection's flow (docs/api.md#connections): the
// flows API reads it to refuse writing such a flow behind the connections API.

const flow = (top: string) => `${top}tasks:\n  - id: a\n    type: command\n    command: ["true"]\n`;

describe('the connection marker', () => {
  it('is kept on the parsed flow when true, and absent otherwise', () => {
    const marked = parseFlow(flow('connection: true\n'), CTX);
    expect(marked).toMatchObject({ ok: true, flow: { connection: true } });
    for (const top of ['', 'connection: false\n']) {
      const plain = parseFlow(flow(top), CTX);
      expect(plain.ok && 'connection' in plain.flow).toBe(false);
    }
  });

  it('must be a boolean', () => {
    expect(parseFlow(flow('connection: yes please\n'), CTX)).toMatchObject({
      ok: false,
      errors: [{ code: 'invalid_type', path: 'connection' }],
    });
  });
});
