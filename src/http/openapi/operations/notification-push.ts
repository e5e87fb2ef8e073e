import { emptyBody, smsBody, smtpBody, subscribeBody, unsubscribeBody } from '../../notification-push.js';
import type { ModuleSchemas } from '../document.js';

/** What the notification-push routes validate (see docs/architecture.md "Adding a module"). */
export const notificationPushSchemas: ModuleSchemas = {
  '/notifications': {
    'POST /push/subscribe': { body: subscribeBody },
    'POST /push/unsubscribe': { body: unsubscribeBody, query: unsubscribeBody },
    'DELETE /push/unsubscribe': { body: unsubscribeBody, query: unsubscribeBody },
    'POST /admin/generate-vapid': { body: emptyBody },
    'POST /admin/verify/smtp': { body: smtpBody },
    'POST /admin/verify/smsprovider': { body: smsBody },
  },
};
