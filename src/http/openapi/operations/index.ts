import type { ModuleSchemas } from '../document.js';
import { accountsSchemas } from './accounts.js';
import { associationsSchemas } from './associations.js';
import { contactsSchemas } from './contacts.js';
import { customisationSchemas } from './customisation.js';
import { dashboardSchemas } from './dashboard.js';
import { formsSchemas } from './forms.js';
import { identitySchemas } from './identity.js';
import { apiKeysSchemas, eventFeedSchemas, webhooksSchemas } from './issue18.js';
import { leadsSchemas } from './leads.js';
import { notificationPushSchemas } from './notification-push.js';
import { notificationsSchemas } from './notifications.js';
import { opportunitiesSchemas } from './opportunities.js';
import { opportunitySettingsSchemas } from './opportunity-settings.js';
import { productsSchemas } from './products.js';
import { reportsSchemas } from './reports.js';
import { taskSettingsSchemas } from './task-settings.js';
import { tasksSchemas } from './tasks.js';
import { searchSchemas } from './web-client.js';
import { timeEntriesSchemas } from './time-entries.js';
import { workRequestSettingsSchemas } from './work-request-settings.js';
import { workRequestsSchemas } from './work-requests.js';
import { workflowsSchemas } from './workflows.js';

/**
 * What each module's routes validate, by module name (as in src/modules.ts). A module whose routes validate nothing
 * (uploads: multipart bodies read by the route itself) needs no entry; the coverage test names any route that does.
 */
export const moduleSchemas: Record<string, ModuleSchemas> = {
  identity: identitySchemas,
  contacts: contactsSchemas,
  accounts: accountsSchemas,
  leads: leadsSchemas,
  'task-settings': taskSettingsSchemas,
  products: productsSchemas,
  tasks: tasksSchemas,
  'opportunity-settings': opportunitySettingsSchemas,
  opportunities: opportunitiesSchemas,
  associations: associationsSchemas,
  'time-entries': timeEntriesSchemas,
  'work-request-settings': workRequestSettingsSchemas,
  'work-requests': workRequestsSchemas,
  workflows: workflowsSchemas,
  reports: reportsSchemas,
  forms: formsSchemas,
  'notification-push': notificationPushSchemas,
  notifications: notificationsSchemas,
  dashboard: dashboardSchemas,
  'event-feed': eventFeedSchemas,
  webhooks: webhooksSchemas,
  'api-keys': apiKeysSchemas,
  customisation: customisationSchemas,
  search: searchSchemas,
};
