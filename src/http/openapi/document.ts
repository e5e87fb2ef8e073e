import type { Router } from 'express';
import { z } from 'zod';
import { errorBodySchema } from '../errors.js';
import { asOfQuery, hasRecordVersioning, historyQuery } from '../record-versioning.js';
import { activityPage } from '../record-subresources.js';
import { mountedRoutes, openApiPath } from './routes.js';

/**
 * What a route validates, declared once per route: the very schemas its handler passes to `parseBody`/`parseQuery`
 * (a handler that reads two query schemas lists both). Nothing else about a route is declared: methods, paths, path
 * parameters, tags and security come from the mounted routers themselves.
 */
export interface RouteSchemas {
  summary?: string;
  body?: z.ZodType;
  query?: z.ZodType | z.ZodType[];
}

/** A router's declarations, keyed `'METHOD /path'` with the path as the router registers it (relative to its prefix). */
export type RouterSchemas = Record<string, RouteSchemas>;

/** A module's declarations per mount prefix (`'/leads'`), as its manifest entry mounts them. */
export type ModuleSchemas = Record<string, RouterSchemas>;

/** One router as the service mounts it: the document's unit (one tag per module). */
export interface DocumentedMount {
  tag: string;
  /** Absolute path prefix, base path included (`/api/leads`). */
  prefix: string;
  router: Pick<Router, 'stack'>;
  public: boolean;
  schemas: RouterSchemas;
}

type JsonSchema = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; responses: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

const relativePath = (mount: DocumentedMount, path: string) => (path === mount.prefix ? '/' : path.slice(mount.prefix.length));

/** Declarations that name no route their router has (a typo, a route removed): the coverage test lists them. */
export function declaredButNotMounted(mounts: DocumentedMount[]): string[] {
  return mounts.flatMap((mount) => {
    const served = new Set(mountedRoutes(mount.router, mount.prefix).map((r) => routeKey(r.method, relativePath(mount, r.path))));
    return Object.keys(mount.schemas)
      .filter((key) => !served.has(normalisedKey(key)))
      .map((key) => `${mount.tag} ${mount.prefix}: ${key}`);
  });
}

/** `'post /types/'` → `'POST /types'`: keys match however the router spelled a trailing slash. */
const normalisedKey = (key: string) => {
  const [method, path = '/'] = key.trim().split(/\s+/);
  return routeKey(method, path.replace(/\/+$/, '') || '/');
};

/** The zod schema as JSON Schema of what a client sends (`io: 'input'`); what JSON Schema cannot say (a transform's output, a date object) is left open. */
function toJsonSchema(schema: z.ZodType, name: string, components: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete json.$schema;
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
  delete json.$defs;
  // Definitions (recursive schemas) move to components, where a `$ref` inside the document can reach them.
  let selfReferenced = false;
  const rewrite = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(rewrite);
    if (typeof node !== 'object' || node === null) return;
    const record = node as JsonSchema;
    if (record.$ref === '#') {
      selfReferenced = true;
      record.$ref = `#/components/schemas/${name}`;
    } else if (typeof record.$ref === 'string' && record.$ref.startsWith('#/$defs/')) {
      record.$ref = `#/components/schemas/${name}.${componentName(record.$ref.slice('#/$defs/'.length))}`;
    }
    Object.values(record).forEach(rewrite);
  };
  rewrite(json);
  for (const [def, value] of Object.entries(defs)) {
    rewrite(value);
    components[`${name}.${componentName(def)}`] = value;
  }
  if (!selfReferenced) return json;
  components[name] = json;
  return { $ref: `#/components/schemas/${name}` };
}

const componentName = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, '_');

function operationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

function queryParameters(schemas: z.ZodType[], name: string, components: Record<string, JsonSchema>): unknown[] {
  return schemas.flatMap((schema, index): unknown[] => {
    const json = toJsonSchema(schema, `${name}.query${index || ''}`, components);
    const properties = json.properties as Record<string, JsonSchema> | undefined;
    const required = new Set((json.required as string[] | undefined) ?? []);
    // Not an object of fields (a union…): one parameter whose fields are the query's.
    if (json.type !== 'object' || !properties) return [{ name: 'query', in: 'query', style: 'form', explode: true, schema: json }];
    return Object.entries(properties).map(([property, schema]) => ({
      name: property,
      in: 'query',
      required: required.has(property),
      schema,
      // Nested objects are read with the `qs` bracket syntax (`filters[status]=open`).
      ...(schema.type === 'object' ? { style: 'deepObject', explode: true } : {}),
    }));
  });
}

/** A body is required unless the schema accepts the `{}` that `parseBody` validates when none is sent. */
function bodyRequired(schema: z.ZodType): boolean {
  try {
    return !schema.safeParse({}).success;
  } catch {
    return true;
  }
}

const errorResponse = { $ref: '#/components/responses/Error' };

const header = (name: string, description: string) => ({ name, in: 'header', required: false, description, schema: { type: 'string' } });

/**
 * What the shared machinery adds to a route, whoever declares it: record versioning (src/http/record-versioning.ts) on
 * the `/:id` routes of a router that mounts it, `from`/`to` on every `/:id/history`, and Idempotency-Key on every
 * authenticated POST (src/http/idempotency.ts).
 */
function sharedBehaviour(mount: DocumentedMount, method: string, relative: string) {
  const underRecord = hasRecordVersioning(mount.router) && /^\/:[^/]+(\/|$)/.test(relative);
  return {
    detail: underRecord && method === 'GET' && /^\/:[^/]+$/.test(relative),
    guardedWrite: underRecord && method !== 'GET',
    history: method === 'GET' && /^\/:[^/]+\/history$/.test(relative),
    activities: method === 'GET' && /^\/:[^/]+\/activities$/.test(relative),
    idempotent: !mount.public && method === 'POST',
  };
}

function operation(mount: DocumentedMount, method: string, expressPath: string, components: Record<string, JsonSchema>, taken: Set<string>) {
  const { path, params } = openApiPath(expressPath);
  const key = routeKey(method, relativePath(mount, expressPath));
  const declared = Object.entries(mount.schemas).find(([declaredKey]) => normalisedKey(declaredKey) === key)?.[1] ?? {};
  // Paths that differ only in punctuation (`/scoring-rules/:id`, `/scoring/rules/:id`) give the same words: the later one is numbered.
  const base = operationId(method, path);
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}${n}`;
  taken.add(id);
  const shared = sharedBehaviour(mount, method.toUpperCase(), relativePath(mount, expressPath));
  const query = [...(declared.query === undefined ? [] : [declared.query].flat()), ...(shared.detail ? [asOfQuery] : []), ...(shared.history ? [historyQuery] : []), ...(shared.activities && declared.query === undefined ? [activityPage] : [])];
  const parameters = [
    ...params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ...queryParameters(query, id, components),
    ...(shared.detail ? [header('If-None-Match', 'The ETag of a copy the client holds: 304 while the record is still at that revision')] : []),
    ...(shared.guardedWrite ? [header('If-Match', 'The ETag the client read ("3"): 412 when the record has moved on since, and nothing is written')] : []),
    ...(shared.idempotent ? [header('Idempotency-Key', 'A retry with the same key and body answers the first response and changes nothing; another body with it is 422')] : []),
  ];
  const validates = parameters.length > 0 || declared.body !== undefined;
  const etag = { ETag: { description: "The record's revision after this request", schema: { type: 'string' } } };
  return {
    path,
    operation: {
      operationId: id,
      tags: [mount.tag],
      ...(declared.summary ? { summary: declared.summary } : {}),
      security: mount.public ? [] : [{ bearer: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(declared.body
        ? { requestBody: { required: bodyRequired(declared.body), content: { 'application/json': { schema: toJsonSchema(declared.body, `${id}.body`, components) } } } }
        : {}),
      responses: {
        // Response bodies have no schemas yet: described loosely.
        '2XX': {
          description: 'Success (201 with the record for a create; 202 while a write is not yet readable)',
          ...(shared.detail || shared.guardedWrite ? { headers: etag } : {}),
          content: { 'application/json': { schema: {} } },
        },
        ...(shared.detail ? { '304': { description: 'Not modified: the record is still at the revision If-None-Match named' } } : {}),
        ...(validates ? { '400': errorResponse } : {}),
        ...(shared.guardedWrite ? { '412': errorResponse } : {}),
        ...(shared.idempotent ? { '409': errorResponse, '422': errorResponse } : {}),
        ...(mount.public ? {} : { '401': errorResponse, '403': errorResponse }),
        ...(params.length ? { '404': errorResponse } : {}),
        default: errorResponse,
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of the given mounts: every route each router serves (the first of two identical ones, as
 * express answers), with its path parameters, declared query and body schemas, tag and security.
 */
export function openApiDocument(mounts: DocumentedMount[]): OpenApiDocument {
  const components: Record<string, JsonSchema> = { ErrorBody: toJsonSchema(errorBodySchema, 'ErrorBody', {}) };
  const paths: OpenApiDocument['paths'] = {};
  const taken = new Set<string>();
  for (const mount of mounts) {
    for (const route of mountedRoutes(mount.router, mount.prefix)) {
      const { path } = openApiPath(route.path);
      const item = (paths[path] ??= {});
      item[route.method.toLowerCase()] ??= operation(mount, route.method, route.path, components, taken).operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'CRM API',
      // The API has one version; its paths carry none.
      version: '1',
      description:
        'Generated from the zod schemas the routes validate with. Authenticate with `Authorization: Bearer <access token>` (POST /auth/login) or `Bearer <API key>` (POST /api-keys).',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(mounts.map((m) => m.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: components,
      responses: {
        Error: { description: 'An error: statusCode, error, message, and details (the validation issues of a 400)', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } },
      },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An access token (a JWT from POST /auth/login or /auth/refresh) or an API key (`crm_…`, made by an admin with POST /api-keys, acting with its role)' },
      },
    },
  };
}
