import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

// The runner's HTTP, on node:http rather than fetch. fetch loads undici on its
// first use — ≈60 ms of compiling before the first request, against ≈15 ms
// for node:http here — and the runner makes that first request (its spec)
// on the critical path of every task run it starts. The answer keeps the
// shape of fetch's Response that the API clients read, so a client works
// with either.

/** The part of an HTTP answer the API clients read; fetch's Response has it too. */
export interface HttpAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export interface HttpExchangeRequest {
  method: string;
  headers: Record<string, string>;
  /** A Readable is streamed (and used up); strings and buffers are sent with their length. */
  body?: string | Buffer | Readable;
  /** Aborts the exchange; the promise then rejects with the signal's reason (e.g. a TimeoutError). */
  signal?: AbortSignal;
}

/** Sends one request and resolves once the whole answer has arrived: a body cut short rejects. */
export type HttpExchange = (url: string, request: HttpExchangeRequest) => Promise<HttpAnswer>;

// One pool of kept-alive connections per process: a runner talks to one server.
// Idle pooled sockets do not keep the process alive (node:http unrefs them).
const agents = {
  'http:': new HttpAgent({ keepAlive: true }),
  'https:': new HttpsAgent({ keepAlive: true }),
};

export const nodeHttpExchange: HttpExchange = (url, request) => {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return Promise.reject(new Error(`cannot send to ${target.protocol} URLs, only http: and https:`));
  }
  const { signal } = request;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  const headers = { ...request.headers };
  if (typeof request.body === 'string' || Buffer.isBuffer(request.body)) {
    headers['content-length'] = String(Buffer.byteLength(request.body));
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      reject(signal?.aborted ? abortReason(signal) : error);
    };
    const req = send(target, {
      method: request.method,
      headers,
      agent: agents[target.protocol as keyof typeof agents],
      signal,
    });
    req.once('error', fail);
    req.once('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', fail);
      res.once('end', () => {
        if (settled || !res.complete) return;
        settled = true;
        resolve(answer(res, Buffer.concat(chunks)));
      });
      // A connection that closes before the answer's end: no usable answer, like a reset.
      res.once('close', () =>
        fail(Object.assign(new Error('the answer was cut short'), { code: 'ECONNRESET' })),
      );
    });
    if (request.body instanceof Readable) {
      pipeline(request.body, req).catch((error: unknown) => {
        req.destroy(error as Error);
        fail(error);
      });
    } else {
      req.end(request.body);
    }
  });
};

function answer(res: IncomingMessage, body: Buffer): HttpAnswer {
  const status = res.statusCode ?? 0;
  const text = () => body.toString('utf8');
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get: (name) => {
        const value = res.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    text: async () => text(),
    json: async () => JSON.parse(text()) as unknown,
    arrayBuffer: async () =>
      body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer,
  };
}

/** What an aborted exchange rejects with: the signal's own reason (a TimeoutError for AbortSignal.timeout). */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? Object.assign(new Error('the request was aborted'), { name: 'AbortError' });
}
