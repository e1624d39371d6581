import { Client } from 'pg';

/**
 * One connection attempt: 'ready' when the server takes connections,
 * 'starting' while it is not listening yet or still starting up / recovering
 * (57P03); any other failure is thrown.
 */
export async function probeConnection(url: string, timeoutMs = 5_000): Promise<'ready' | 'starting'> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.end();
    return 'ready';
  } catch (err) {
    await client.end().catch(() => undefined);
    const code = (err as { code?: string }).code;
    if (code === 'ECONNREFUSED' || code === '57P03' || code === 'ECONNRESET') return 'starting';
    throw err;
  }
}
