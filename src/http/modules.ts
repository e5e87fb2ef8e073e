import type { Router } from 'express';
import type { Services } from '../service.js';

/** Mounts every module's routes under the API base path. Modules add a line here as they land. */
export function mountModules(_router: Router, _services: Services): void {}
