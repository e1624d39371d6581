import request from 'supertest';
import { CODES } from '@sluice/flows';
import { buildOpenApiDocument, OPERATIONS } from '@sluice/api';
import { PUBLIC_ERROR_CODES } from '@sluice/api-schemas';
import { startApiHarness, type ApiHarness } from './harness';
import { validateOpenApiDocument, toOpenApiRoute } from './openapi-check';
import { listRoutes } from './workspaces';

// GET /api/v1/openapi.json (docs/api.md): a valid OpenAPI 3.1 document of
// exactly the routes the router has, with every error code clients may see.

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness();
});
afterAll(() => h.close());

describe('the OpenAPI document', () => {
  it('is served without a token, and is the document the schemas build', async () => {
    const res = await request(h.publicApp).get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    expect(res.body.openapi).toBe('3.1.0');
  });

  it('passes a third-party OpenAPI 3.1 validator', () => {
    const result = validateOpenApiDocument(buildOpenApiDocument());
    expect(result).toEqual({ valid: true });
  });

  it('describes every route of the router, and only those', () => {
    const routes = listRoutes(h.publicApp)
      .filter((r) => r.split(' ')[1]!.startsWith('/api/v1/'))
      .map(toOpenApiRoute)
      .sort();
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    expect(documented).toEqual(routes);
    expect(new Set(OPERATIONS.map((o) => o.operationId)).size).toBe(OPERATIONS.length);
  });

  it('lists every code of the flow validator and of the error bodies', () => {
    const doc = buildOpenApiDocument() as {
      info: { description: string };
      components: {
        schemas: Record<
          string,
          {
            properties: Record<string, { properties?: Record<string, { enum?: string[] }>; enum?: string[] }>;
          }
        >;
      };
    };
    const { schemas } = doc.components;
    expect(schemas.ValidationIssue!.properties.code!.enum!.sort()).toEqual(Object.keys(CODES).sort());
    expect(schemas.Error!.properties.error!.properties!.code!.enum!.sort()).toEqual(
      Object.keys(PUBLIC_ERROR_CODES).sort(),
    );
    for (const code of [...Object.keys(CODES), ...Object.keys(PUBLIC_ERROR_CODES)])
      expect(doc.info.description).toContain(`\`${code}\``);
  });
});
