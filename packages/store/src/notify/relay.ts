import { Client } from 'pg';

/** What the relay logs through (a winston logger from @sluice/observability fits). */
export interface NotifyRelayLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export interface NotifyRelayOptions {
  databaseUrl: string;
  /** channel → what to call on each NOTIFY on it (and once after every reconnect). */
  channels: Record<string, () => void>;
  log: NotifyRelayLog;
  /** Wait before reconnecting after the connection fails. Default 3 s. */
  retryDelayMs?: number;
}

export interface NotifyRelay {
  /** Resolves after the first connection attempt: true when it is listening. */
  firstAttempt: Promise<boolean>;
  /** Whether the LISTEN connection is up now. */
  listening(): boolean;
  stop(): Promise<void>;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * Holds one dedicated connection that LISTENs on `channels` and calls their
 * handlers on NOTIFY. NOTIFY only speeds things up — every consumer also
 * polls — so a lost connection is logged and re-opened every `retryDelayMs`
 * rather than failing the process; after a reconnect every handler runs once
 * to pick up what was announced while nobody listened.
 */
export function startNotifyRelay(options: NotifyRelayOptions): NotifyRelay {
  const channels = Object.keys(options.channels);
  for (const channel of channels) {
    if (!CHANNEL_NAME.test(channel))
      throw new Error(`startNotifyRelay: invalid channel name ${JSON.stringify(channel)}`);
  }
  const retryDelayMs = options.retryDelayMs ?? 3000;
  const dead = new WeakSet<Client>();
  let current: Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let failed = false;
  let attempt: Promise<boolean> | undefined;

  const lost = (client: Client, err: unknown): void => {
    // 'error' and 'end' both fire for one failure; handle it once.
    if (dead.has(client)) return;
    dead.add(client);
    if (current === client) current = undefined;
    client.end().catch(() => undefined);
    if (stopped) return;
    failed = true;
    options.log.warn('LISTEN connection unavailable; relying on polling until it is back', {
      channels,
      error: errorMessage(err),
      retryInMs: retryDelayMs,
    });
    retry = setTimeout(() => {
      attempt = connect();
    }, retryDelayMs);
  };

  const connect = async (): Promise<boolean> => {
    retry = undefined;
    const client = new Client({ connectionString: options.databaseUrl, keepAlive: true });
    client.on('error', (err) => lost(client, err));
    client.on('end', () => lost(client, new Error('connection closed')));
    client.on('notification', (n) => options.channels[n.channel]?.());
    try {
      await client.connect();
      for (const channel of channels) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      lost(client, err);
      return false;
    }
    if (stopped || dead.has(client)) {
      dead.add(client);
      await client.end().catch(() => undefined);
      return false;
    }
    current = client;
    if (failed) {
      failed = false;
      options.log.info('LISTEN connection restored', { channels });
      for (const handler of Object.values(options.channels)) handler();
    }
    return true;
  };

  const firstAttempt = connect();
  attempt = firstAttempt;
  return {
    firstAttempt,
    listening: () => current !== undefined,
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await attempt; // a connection being opened now is closed by connect() itself
      const client = current;
      current = undefined;
      if (client) {
        dead.add(client);
        await client.end().catch(() => undefined);
      }
    },
  };
}
