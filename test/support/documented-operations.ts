import type { TestService } from './service.js';

/** An operation of the service's OpenAPI document, as the route-wide walks read it. */
export interface DocumentedOperation {
  method: string;
  /** The document's path, `{name}` for each parameter. */
  path: string;
  /** Needs a signed-in caller (or an API key). */
  authenticated: boolean;
  hasBody: boolean;
  /** Its query parameters' names. */
  query: string[];
  /** The top-level properties of its JSON body's schema. */
  bodyFields: string[];
}

type Operation = {
  security?: unknown[];
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
};

/** Every operation the running service documents (so a route added later is walked too). */
export async function documentedOperations(service: TestService): Promise<DocumentedOperation[]> {
  const document = (await service.request('GET', '/api/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      authenticated: !!operation.security?.length,
      hasBody: operation.requestBody !== undefined,
      query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      bodyFields: Object.keys(Object.values(operation.requestBody?.content ?? {})[0]?.schema?.properties ?? {}),
    })),
  );
}
