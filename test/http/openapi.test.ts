import { expect } from 'chai';
import { Router, type Express } from 'express';
import { z } from 'zod';
import { loginBody } from '../../src/http/auth.js';
import { createBody as leadCreateBody, listQuery as leadListQuery } from '../../src/http/leads/schemas.js';
import { declaredButNotMounted, openApiDocument, type OpenApiDocument } from '../../src/http/openapi/document.js';
import { moduleMounts } from '../../src/http/openapi/index.js';
import { mountedRoutes, openApiPath, type MountedRoute } from '../../src/http/openapi/routes.js';
import { parseBody } from '../../src/http/validate.js';
import { modules } from '../../src/modules.js';
import { mountProbeRoutes } from '../support/probe-module.js';
import { registerTenant } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

type Operation = {
  operationId: string;
  tags: string[];
  security: unknown[];
  parameters?: { name: string; in: string; required: boolean; schema: unknown }[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: Record<string, unknown> } } };
  responses: Record<string, unknown>;
};

const operationOf = (document: OpenApiDocument, method: string, path: string) => document.paths[path]?.[method.toLowerCase()] as Operation | undefined;

/** What the validator itself says, converted the way the document converts it. */
const inputSchema = (schema: z.ZodType) => {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return json;
};

const source = (handler: unknown) => (typeof handler === 'function' ? Function.prototype.toString.call(handler) : '');

/**
 * Every way the served routes and the document disagree: a route with no operation, an operation with no route, a
 * route whose handler validates a body or query that its operation does not describe.
 */
function coverageProblems(served: MountedRoute[], document: OpenApiDocument): string[] {
  const problems: string[] = [];
  const servedKeys = new Set<string>();
  for (const route of served) {
    const path = openApiPath(route.path).path;
    const key = `${route.method} ${path}`;
    if (servedKeys.has(key)) continue; // express answers the first of two identical routes
    servedKeys.add(key);
    const operation = operationOf(document, route.method, path);
    if (!operation) {
      problems.push(`${key}: served but not in the document`);
      continue;
    }
    // `parseBody(` as written, `(0, import_validate.parseBody)(` as compiled to CommonJS.
    const code = route.handlers.map(source).join('\n');
    if (/\bparseBody\)?\(/.test(code) && !operation.requestBody) problems.push(`${key}: validates a body the document does not describe`);
    if (/\bparseQuery\)?\(/.test(code) && !operation.parameters?.some((p) => p.in === 'query')) problems.push(`${key}: validates a query the document does not describe`);
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of Object.keys(item)) {
      if (!servedKeys.has(`${method.toUpperCase()} ${path}`)) problems.push(`${method.toUpperCase()} ${path}: in the document but not served`);
    }
  }
  return problems;
}

/** Every `$ref` of the document, as JSON pointers into it. */
function refsOf(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsOf(n, found));
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refsOf(value, found);
    }
  }
  return found;
}

const resolvePointer = (document: unknown, ref: string) =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, part) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[part] : undefined), document);

describe('the OpenAPI document', () => {
  let service: TestService;
  let document: OpenApiDocument;
  /** Every route the running service serves, but the test-only probe routes. */
  let served: MountedRoute[];

  before(async () => {
    service = await startTestService();
    const res = await service.request('GET', '/api/openapi.json');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    document = res.body;
    const app = service.server?.listeners('request')[0] as Express;
    const probes = Router();
    mountProbeRoutes(probes, service.services);
    const probeKeys = new Set(mountedRoutes(probes, '/api').map((r) => `${r.method} ${r.path}`));
    served = mountedRoutes(app.router).filter((r) => !probeKeys.has(`${r.method} ${r.path}`));
  });
  after(async () => service.stop());

  describe('GET /api/openapi.json', () => {
    it('is public JSON: OpenAPI 3.1.0 with a bearer scheme and one tag per module', async () => {
      const res = await service.request('GET', '/api/openapi.json');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(document.openapi).to.equal('3.1.0');
      expect(document.components.securitySchemes.bearer).to.include({ type: 'http', scheme: 'bearer' });
      // Both kinds of bearer the service accepts.
      expect((document.components.securitySchemes.bearer as { description: string }).description).to.match(/access token/).and.match(/API key/);
      const routedModules = modules.filter((m) => m.routes?.length).map((m) => m.name);
      expect(document.tags.map((t) => t.name)).to.include.members([...routedModules, 'platform']);
    });

    it('describes what the shared machinery adds: ETag, If-None-Match and asOf on record details, If-Match on their writes, from/to on histories, Idempotency-Key on authenticated POSTs', () => {
      const op = (method: string, path: string) => (document.paths[path] as Record<string, any>)[method];
      const names = (o: any, where: string) => (o.parameters ?? []).filter((p: any) => p.in === where).map((p: any) => p.name);
      for (const kind of ['leads', 'contacts', 'accounts', 'opportunities', 'tasks', 'work-requests', 'products', 'time-entries', 'forms', 'workflows', 'reports', 'users']) {
        const detail = op('get', `/api/${kind}/{id}`);
        expect(names(detail, 'query'), kind).to.include('asOf');
        expect(names(detail, 'header'), kind).to.include('If-None-Match');
        expect(detail.responses, kind).to.have.property('304');
        expect(detail.responses['2XX'].headers, kind).to.have.property('ETag');
      }
      const update = op('put', '/api/leads/{id}');
      expect(names(update, 'header')).to.include('If-Match');
      expect(update.responses).to.have.property('412');
      expect(names(op('delete', '/api/contacts/{id}'), 'header')).to.include('If-Match');
      for (const path of ['/api/leads/{id}/history', '/api/users/{id}/history']) expect(names(op('get', path), 'query'), path).to.include.members(['from', 'to']);
      const create = op('post', '/api/leads');
      expect(names(create, 'header')).to.include('Idempotency-Key');
      expect(create.responses).to.include.keys('409', '422');
      // Not where the machinery does not run: a list, a public POST, a router without versioning.
      expect(names(op('get', '/api/leads'), 'query')).to.not.include('asOf');
      expect(names(op('post', '/api/forms/public/{tenantSlug}/{token}/submit'), 'header')).to.not.include('Idempotency-Key');
      expect(names(op('get', '/api/webhooks/{id}'), 'header')).to.not.include('If-None-Match');
    });

    it('names every route the service serves, and no other', () => {
      expect(served.length).to.be.greaterThan(400);
      expect(coverageProblems(served, document)).to.deep.equal([]);
    });

    it('has no schema declared for a route that does not exist', () => {
      expect(declaredButNotMounted(moduleMounts(modules, service.services, '/api'))).to.deep.equal([]);
    });

    it('is well formed: every $ref resolves, every path parameter is declared, operation ids are unique', () => {
      const refs = refsOf(document);
      expect(refs.length).to.be.greaterThan(0);
      for (const ref of refs) expect(resolvePointer(document, ref), ref).to.not.equal(undefined);
      const ids = new Set<string>();
      for (const [path, item] of Object.entries(document.paths)) {
        const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
        for (const [method, op] of Object.entries(item) as [string, Operation][]) {
          const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
          expect(declared.map((p) => p.name).sort(), `${method} ${path}`).to.deep.equal(inTemplate);
          expect(declared.every((p) => p.required), `${method} ${path}`).to.equal(true);
          expect(ids.has(op.operationId), op.operationId).to.equal(false);
          ids.add(op.operationId);
          expect(op.responses.default).to.deep.equal({ $ref: '#/components/responses/Error' });
        }
      }
    });

    it('marks public routes as needing no authentication and the others as bearer', () => {
      expect(operationOf(document, 'POST', '/api/auth/login')?.security).to.deep.equal([]);
      expect(operationOf(document, 'GET', '/api/forms/public/{tenantSlug}/{token}')?.security).to.deep.equal([]);
      expect(operationOf(document, 'GET', '/health')?.security).to.deep.equal([]);
      expect(operationOf(document, 'GET', '/api/openapi.json')?.security).to.deep.equal([]);
      const lead = operationOf(document, 'GET', '/api/leads/{id}');
      expect(lead?.security).to.deep.equal([{ bearer: [] }]);
      expect(lead?.tags).to.deep.equal(['leads']);
      expect(lead?.responses).to.include.keys('401', '403', '404');
    });
  });

  describe('schemas are the validators’ own', () => {
    it('POST /api/leads takes exactly the leads create schema', () => {
      const body = operationOf(document, 'POST', '/api/leads')?.requestBody;
      expect(body?.content['application/json'].schema).to.deep.equal(inputSchema(leadCreateBody));
    });

    it('GET /api/leads lists the fields of the leads list query as query parameters', () => {
      const parameters = operationOf(document, 'GET', '/api/leads')?.parameters?.filter((p) => p.in === 'query') ?? [];
      const query = inputSchema(leadListQuery) as { properties: Record<string, unknown>; required?: string[] };
      expect(parameters.map((p) => p.name)).to.deep.equal(Object.keys(query.properties));
      for (const p of parameters) expect(p.schema, p.name).to.deep.equal(query.properties[p.name]);
      expect(parameters.filter((p) => p.required).map((p) => p.name)).to.deep.equal(query.required ?? []);
    });

    it('POST /api/auth/login requires what the server refuses without', async () => {
      const body = operationOf(document, 'POST', '/api/auth/login')?.requestBody;
      const schema = body?.content['application/json'].schema as { required: string[] };
      expect(body?.required).to.equal(true);
      expect(schema).to.deep.equal(inputSchema(loginBody));
      expect(schema.required).to.include.members(['email', 'password']);
      const res = await service.request('POST', '/api/auth/login', {});
      expect(res.status).to.equal(400);
      const refused = (res.body.details as { path: string }[]).map((d) => d.path);
      expect(refused).to.include.members(schema.required);
    });

    it('a dashboard figure takes the common query and its own', () => {
      const names = operationOf(document, 'GET', '/api/dashboard/top-performers')?.parameters?.map((p) => p.name);
      expect(names).to.include.members(['scope', 'from', 'to', 'pipelineId', 'asOf', 'metricKey', 'limit']);
    });

    it('recursive schemas (workflow steps) are components the document can reach', () => {
      const schema = operationOf(document, 'POST', '/api/workflows')?.requestBody?.content['application/json'].schema;
      const refs = refsOf(schema);
      expect(refs.length).to.be.greaterThan(0);
      for (const ref of refs) expect(ref).to.match(/^#\/components\/schemas\//);
    });
  });

  describe('the coverage check', () => {
    const routerWith = (register: (router: Router) => void) => {
      const router = Router();
      register(router);
      return router;
    };

    it('fails for a route that validates a body the document does not describe', () => {
      const widgets = routerWith((r) => r.post('/', (req, res) => res.json(parseBody(z.object({ name: z.string() }), req))));
      const mounts = [{ tag: 'widgets', prefix: '/api/widgets', router: widgets, public: false, schemas: {} }];
      expect(coverageProblems(mountedRoutes(widgets, '/api/widgets'), openApiDocument(mounts))).to.deep.equal([
        'POST /api/widgets: validates a body the document does not describe',
      ]);
      const declared = [{ ...mounts[0], schemas: { 'POST /': { body: z.object({ name: z.string() }) } } }];
      expect(coverageProblems(mountedRoutes(widgets, '/api/widgets'), openApiDocument(declared))).to.deep.equal([]);
    });

    it('fails for a served route missing from the document, and for a documented route that is not served', () => {
      const extra = routerWith((r) => r.get('/:id/things', (_req, res) => res.json([])));
      const withExtra = [...served, ...mountedRoutes(extra, '/api/widgets')];
      expect(coverageProblems(withExtra, document)).to.deep.equal(['GET /api/widgets/{id}/things: served but not in the document']);
      expect(coverageProblems(served.filter((r) => r.path !== '/api/leads/:id/convert'), document)).to.deep.equal([
        'POST /api/leads/{id}/convert: in the document but not served',
      ]);
    });

    it('names a declaration whose route does not exist', () => {
      const widgets = routerWith((r) => r.get('/', (_req, res) => res.json([])));
      const mounts = [{ tag: 'widgets', prefix: '/api/widgets', router: widgets, public: false, schemas: { 'POST /': { body: z.object({}) } } }];
      expect(declaredButNotMounted(mounts)).to.deep.equal(['widgets /api/widgets: POST /']);
    });
  });

  describe('GET /api/docs', () => {
    it('is a public HTML page rendering the document with a pinned Scalar, refused by the browser unless its hash matches', async () => {
      const res = await service.request('GET', '/api/docs');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.body).to.include(`Scalar.createApiReference('#app', { url: "/api/openapi.json" })`);
      const script = /<script src="([^"]+)" integrity="(sha384-[A-Za-z0-9+/]{64})" crossorigin="anonymous"><\/script>/.exec(res.body);
      expect(script, 'a script tag with subresource integrity').to.not.equal(null);
      // An explicit file at an exact version: the default entry of a package may be served re-minified, breaking the hash.
      expect(script![1]).to.match(/^https:\/\/cdn\.jsdelivr\.net\/npm\/@scalar\/api-reference@\d+\.\d+\.\d+\/dist\/browser\/standalone\.js$/);
    });

    it('is served whoever asks, while the documented routes still need a token', async () => {
      const admin = await registerTenant(service);
      expect((await service.request('GET', '/api/leads')).status).to.equal(401);
      expect((await service.request('GET', '/api/leads', undefined, admin.auth)).status).to.equal(200);
      expect((await service.request('GET', '/api/openapi.json', undefined, { authorization: 'Bearer not-a-token' })).status).to.equal(200);
    });
  });
});
