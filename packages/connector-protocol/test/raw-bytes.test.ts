import { ConnectorOutputParser } from '@sluice/connector-protocol';

// A message's raw bytes are what a forwarder writes on (the sync orchestrator): as received, line end included.

test('raw is the line as received, its line end included, whatever the chunk boundaries', () => {
  const lines = [
    '{"type":"RECORD","record":{"stream":"s","data":{"v":"ä"},"emitted_at":1}}\n',
    '{"type":"STATE","state":{"type":"LEGACY","data":{"c":1}}}\r\n',
    '{"type":"RECORD","record":{"stream":"s","data":{},"emitted_at":2}}',
  ];
  const all = Buffer.from(lines.join(''));
  for (const cut of [1, 7, 40, all.length]) {
    const parser = new ConnectorOutputParser();
    const parsed = [];
    for (let i = 0; i < all.length; i += cut) parsed.push(...parser.push(all.subarray(i, i + cut)));
    parsed.push(...parser.end());
    expect(parsed.map((p) => (p.kind === 'message' ? p.raw?.toString() : p.kind))).toEqual(lines);
  }
});
