/**
 * The `http` task: its request fields, how its response becomes outputs, and
 * how it is described in logs. No I/O here except reading a response body.
 */

export interface HttpRequestSpec {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Already encoded; undefined when the task sends no body. */
  body: string | undefined;
  /** Accepted statuses; null means any 2xx. */
  expectedStatus: number[] | null;
}

/** Longest response body kept as the `body` output, in bytes. */
export const HTTP_BODY_OUTPUT_MAX_BYTES = 64 * 1024;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const isStatus = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 100 && (v as number) <= 599;

/** Reads `task.request`; throws an Error naming the field at fault. */
export function parseHttpTask(task: Record<string, unknown>): HttpRequestSpec {
  const request = task.request;
  if (!isRecord(request)) throw new Error('task.request must be an object');
  const { url, method = 'GET', headers = {}, body, expected_status: expected } = request;
  if (typeof url !== 'string' || url === '') throw new Error('task.request.url must be a non-empty string');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`task.request.url is not a valid URL: ${describeUrl(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`task.request.url must use http or https, not ${parsed.protocol}`);
  }
  if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method)) {
    throw new Error('task.request.method must be an HTTP method name');
  }
  if (!isRecord(headers)) throw new Error('task.request.headers must be an object of strings');
  const headerValues: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new Error(`task.request.headers.${name} must be a string`);
    }
    headerValues[name] = String(value);
  }
  const upperMethod = method.toUpperCase();
  let encodedBody: string | undefined;
  if (body !== undefined && body !== null) {
    if (upperMethod === 'GET' || upperMethod === 'HEAD') {
      throw new Error(`task.request.body is not allowed with method ${upperMethod}`);
    }
    if (typeof body === 'string') {
      encodedBody = body;
    } else {
      encodedBody = JSON.stringify(body);
      if (!Object.keys(headerValues).some((h) => h.toLowerCase() === 'content-type')) {
        headerValues['content-type'] = 'application/json';
      }
    }
  }
  let expectedStatus: number[] | null = null;
  if (expected !== undefined && expected !== null) {
    const list = Array.isArray(expected) ? expected : [expected];
    if (list.length === 0 || !list.every(isStatus)) {
      throw new Error('task.request.expected_status must be an HTTP status code or a list of them');
    }
    expectedStatus = list;
  }
  return {
    method: upperMethod,
    url,
    headers: headerValues,
    body: encodedBody,
    expectedStatus,
  };
}

/** The URL as logs may show it: no credentials, no query string (tokens often travel there), no fragment. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(unparseable URL)';
  }
}

export function statusMatches(status: number, expected: number[] | null): boolean {
  return expected === null ? status >= 200 && status <= 299 : expected.includes(status);
}

export function unexpectedStatusMessage(status: number, expected: number[] | null): string {
  const wanted = expected === null ? 'a 2xx status' : `status ${expected.join(' or ')}`;
  return `expected ${wanted}, got ${status}`;
}

/**
 * Reads at most `maxBytes` of the body and drops the rest unread, so a huge
 * response cannot fill the instance's memory. Cuts on a UTF-8 character boundary.
 */
export async function readBodyCapped(
  response: Response,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value));
    size += value.byteLength;
    if (size > maxBytes) {
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  let bytes = Buffer.concat(chunks);
  if (truncated) {
    let cut = maxBytes;
    // Step back over UTF-8 continuation bytes (10xxxxxx) so no character is split.
    while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
    bytes = bytes.subarray(0, cut);
  }
  return { text: bytes.toString('utf8'), truncated };
}

/**
 * Outputs of an http task: `status`, `body`, and — when the whole body is a
 * JSON object — `json.<key>` for each of its scalar values (nested values are
 * left to `body`).
 */
export function responseOutputs(
  status: number,
  body: { text: string; truncated: boolean },
  contentType: string | null,
): Record<string, string> {
  const outputs: Record<string, string> = {
    status: String(status),
    body: body.text,
  };
  if (body.truncated || !contentType || !/\bjson\b/i.test(contentType)) return outputs;
  let value: unknown;
  try {
    value = JSON.parse(body.text);
  } catch {
    return outputs;
  }
  if (!isRecord(value)) return outputs;
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === 'string') outputs[`json.${key}`] = field;
    else if (typeof field === 'number' || typeof field === 'boolean' || field === null) {
      outputs[`json.${key}`] = JSON.stringify(field);
    }
  }
  return outputs;
}
