import { Router } from 'express';
import type { Services } from '../../service.js';
import { healthRouter } from '../health.js';
import { HttpMetrics, metricsRouter } from '../metrics.js';
import { type DocumentedMount, type ModuleSchemas, type OpenApiDocument, openApiDocument } from './document.js';

/** A module manifest entry as far as the document reads it (`ModuleManifest` of src/modules.ts, which http may not import). */
export interface DocumentedModule {
  name: string;
  routes?: { path: string; router: (services: Services) => Router; public?: boolean }[];
  /** What its routes validate, per mount path. */
  operations?: ModuleSchemas;
}

/**
 * Every module router as the service mounts it. Routers are built again here, from the same factories: building one
 * only registers handlers (the coverage test compares the result with the routers actually mounted).
 */
export function moduleMounts(modules: DocumentedModule[], services: Services, basePath: string): DocumentedMount[] {
  return modules.flatMap((module) =>
    (module.routes ?? []).map((routes) => ({
      tag: module.name,
      prefix: basePath + routes.path,
      router: routes.router(services),
      public: routes.public === true,
      schemas: module.operations?.[routes.path] ?? {},
    })),
  );
}

/**
 * The routes outside the modules: `GET /health` (at the root) and this router's own pages. The health router is built
 * with a check that is never called: only its routes are read.
 */
function platformMounts(docs: Router, basePath: string): DocumentedMount[] {
  const unusedCheck = () => Promise.reject(new Error('not called'));
  return [
    { tag: 'platform', prefix: '', router: healthRouter(unusedCheck), public: true, schemas: {} },
    // Guarded by METRICS_TOKEN when set (a scraper's token, not a user's): described as public.
    { tag: 'platform', prefix: '', router: metricsRouter(new HttpMetrics(unusedCheck)), public: true, schemas: {} },
    { tag: 'platform', prefix: basePath, router: docs, public: true, schemas: {} },
  ];
}

/**
 * Scalar's browser bundle, pinned by version and by content: the file path is explicit (jsDelivr serves it byte for
 * byte as published on npm, where the default entry may be re-minified), and the browser refuses it unless it hashes
 * to SCALAR_INTEGRITY (sha384 of `dist/browser/standalone.js` in the npm tarball). A new version needs both changed.
 */
const SCALAR_VERSION = '1.72.1';
const SCALAR_BUNDLE = `https://cdn.jsdelivr.net/npm/@scalar/api-reference@${SCALAR_VERSION}/dist/browser/standalone.js`;
const SCALAR_INTEGRITY = 'sha384-U11tb2XnKvmwt8RlTvnwUnYgrN+ur4Xyh9htLhjajWNR/Oyl5AX5DEz00qRmlrmK';

/** The docs page: Scalar's API reference (pinned, from jsDelivr, checked by subresource integrity) rendering the document next to it. */
const docsPage = (documentUrl: string) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>CRM API reference</title>
  </head>
  <body>
    <noscript>The API reference needs JavaScript; the document itself is at ${documentUrl}.</noscript>
    <div id="app"></div>
    <script src="${SCALAR_BUNDLE}" integrity="${SCALAR_INTEGRITY}" crossorigin="anonymous"></script>
    <script>
      Scalar.createApiReference('#app', { url: ${JSON.stringify(documentUrl).replace(/</g, '\\u003c')} });
    </script>
  </body>
</html>
`;

/**
 * `GET /openapi.json` and `GET /docs` under the API base path, public. The document is built on first request and
 * kept: the routes do not change while the process runs.
 */
export function apiDocsRouter(options: { modules: DocumentedModule[]; services: Services; basePath: string }): Router {
  const router = Router();
  let document: OpenApiDocument | undefined;
  router.get('/openapi.json', (_req, res) => {
    document ??= openApiDocument([...platformMounts(router, options.basePath), ...moduleMounts(options.modules, options.services, options.basePath)]);
    res.json(document);
  });
  // The configured base path, not the request's (routing ignores case): the page holds nothing the client sent.
  const page = docsPage(`${options.basePath}/openapi.json`);
  router.get('/docs', (_req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('html').send(page);
  });
  return router;
}
