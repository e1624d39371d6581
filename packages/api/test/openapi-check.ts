import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type request from 'supertest';

type Doc = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

/**
 * Validates an OpenAPI document with @seriousme/openapi-schema-validator (a
 * third-party validator of OpenAPI 3.1). It is an ES module that reads its
 * schemas next to itself, so it runs in a node process of its own.
 */
export function validateOpenApiDocument(doc: unknown): { valid: boolean; errors?: unknown } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sluice-openapi-'));
  const file = path.join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    const result = await new Validator().validate(process.argv[1]);
    process.stdout.write(JSON.stringify({ valid: result.valid, errors: result.errors }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, file], {
    cwd: path.resolve(__dirname, '..'),
    encoding: 'utf8',
  });
  return JSON.parse(out) as { valid: boolean; errors?: unknown };
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Checks real responses against the document: the body of a response to
 * `method path` (an OpenAPI path, `/executions/{id}`) with its status must
 * match the schema the document gives for that status and media type.
 */
export function responseChecker(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const base = 'https://sluice.invalid/openapi.json';
  ajv.addSchema({ ...doc, $id: base });
  const checked = new Set<string>();

  return {
    /** Every "METHOD path status" checked so far. */
    checked,
    expectMatches(
      method: string,
      openApiPath: string,
      res: request.Response,
      mediaType = 'application/json',
    ) {
      const op = doc.paths[openApiPath]?.[method.toLowerCase()] as
        { responses: Record<string, { content?: Record<string, unknown> }> } | undefined;
      if (!op) throw new Error(`the document has no ${method} ${openApiPath}`);
      const documented = op.responses[String(res.status)];
      if (!documented)
        throw new Error(
          `${method} ${openApiPath} answered ${res.status}, which the document does not list: ${JSON.stringify(res.body)}`,
        );
      checked.add(`${method.toUpperCase()} ${openApiPath} ${res.status}`);
      if (!documented.content) {
        expect({ status: res.status, body: res.text ?? '' }).toEqual({ status: res.status, body: '' });
        return;
      }
      expect(Object.keys(documented.content)).toContain(mediaType);
      expect(String(res.headers['content-type'])).toContain(mediaType);
      if (mediaType === 'application/octet-stream') return;
      const pointer = [
        'paths',
        openApiPath,
        method.toLowerCase(),
        'responses',
        String(res.status),
        'content',
        mediaType,
        'schema',
      ]
        .map(escape)
        .join('/');
      const validate = ajv.getSchema(`${base}#/${pointer}`);
      if (!validate) throw new Error(`cannot compile the schema at ${pointer}`);
      const bodies =
        mediaType === 'application/x-ndjson'
          ? res.text
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l) as unknown)
          : [res.body as unknown];
      for (const body of bodies) {
        const ok = validate(body);
        expect({
          route: `${method} ${openApiPath} ${res.status}`,
          body,
          errors: ok ? null : validate.errors,
        }).toEqual({
          route: `${method} ${openApiPath} ${res.status}`,
          body,
          errors: null,
        });
      }
    },
  };
}

/** `GET /api/v1/namespaces/:ns/files/*path` → `GET /namespaces/{ns}/files/{path}` */
export function toOpenApiRoute(route: string): string {
  const [method, p] = route.split(' ') as [string, string];
  return `${method} ${p.replace(/^\/api\/v1/, '').replace(/[:*](\w+)/g, '{$1}')}`;
}
