import type { Router } from 'express';

/** A route as express serves it: upper-case method and the express path (`/leads/:id`). */
export interface MountedRoute {
  method: string;
  path: string;
  /** The route's middleware and handler, in order. */
  handlers: unknown[];
}

interface StackLayer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean>; stack: { handle: unknown }[] };
  handle?: { stack?: StackLayer[] };
}

const joinPaths = (prefix: string, path: string) => `${prefix}/${path}`.replace(/\/{2,}/g, '/').replace(/\/+$/, '') || '/';

/**
 * Every route of an express router (or app: pass `app.router`), with the prefixes of the routers it is mounted under,
 * in the order express tries them. The OpenAPI document and its coverage test both read routes this way, so a route
 * added to any router shows up in both without being listed anywhere.
 */
export function mountedRoutes(router: Pick<Router, 'stack'> | { stack: unknown[] }, prefix = ''): MountedRoute[] {
  const routes: MountedRoute[] = [];
  for (const layer of router.stack as StackLayer[]) {
    if (layer.route) {
      if (typeof layer.route.path !== 'string') throw new Error(`Route path ${String(layer.route.path)} under ${prefix || '/'} is not a string: the OpenAPI document cannot name it`);
      const path = joinPaths(prefix, layer.route.path);
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && method !== '_all') routes.push({ method: method.toUpperCase(), path, handlers: layer.route.stack.map((l) => l.handle) });
      }
    } else if (layer.handle?.stack && typeof layer.rawPath === 'string') {
      routes.push(...mountedRoutes({ stack: layer.handle.stack }, joinPaths(prefix, layer.rawPath)));
    }
  }
  return routes;
}

/** `/leads/:id/team/:userId` → `/leads/{id}/team/{userId}` and its parameter names. */
export function openApiPath(expressPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = expressPath.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}
