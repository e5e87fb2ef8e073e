import type { Router } from 'express';
import type { Services } from '../service.js';
import { accountsRouter } from './accounts.js';
import { adminRouter } from './admin.js';
import { contactsRouter } from './contacts.js';
import { leadsRouter } from './leads.js';
import { leadSettingsRouter } from './lead-settings.js';
import { authRouter } from './auth.js';
import { organisationRouter } from './organisation.js';
import { usersRouter } from './users.js';

/** Mounts every module's routes under the API base path. Modules add a line here as they land. */
export function mountModules(router: Router, services: Services): void {
  router.use(authRouter(services));
  router.use(usersRouter(services));
  router.use(organisationRouter(services));
  router.use(adminRouter(services));
  router.use(contactsRouter(services));
  router.use(accountsRouter(services));
  router.use(leadsRouter(services));
  router.use(leadSettingsRouter(services));
}
