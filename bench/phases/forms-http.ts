import type { CleanupStack } from '../cleanup.js';
import type { LoadResult } from '../http-load.js';
import { settle } from './http.js';
import { serviceWithTenant } from './tenant-service.js';
import { timedLoad } from './timed-load.js';

export interface FormSubmitHttpResult {
  submit: LoadResult;
  submissions: number;
  connections: number;
}

/**
 * POST /forms/public/:slug/:token/submit of an active form whose one action is create_lead:
 * values checked by type (E.164 phone), the lead created through the lead command (scored,
 * SLA), the FormSubmitted event appended, and the answer waits for the projections. Every
 * request comes from one address, so the per-IP limit is lifted for the phase.
 */
export async function measureFormSubmitHttp(deps: { cleanup: CleanupStack; databaseUrl: string }, options: { seconds: number; connections: number }): Promise<FormSubmitHttpResult> {
  const { seconds, connections } = options;
  const { service, client, tenantSlug } = await serviceWithTenant(deps, 'forms', connections, { FORM_SUBMIT_LIMIT_PER_IP: '100000000' });
  const form = await client.json<{ id: string; token: string }>('POST', '/api/forms', {
    name: 'Bench demo request',
    status: 'active',
    fields: [
      { type: 'text', name: 'first', label: 'First name' },
      { type: 'text', name: 'last', label: 'Last name', required: true },
      { type: 'email', name: 'email', label: 'Email', required: true },
      { type: 'phone', name: 'phone', label: 'Phone' },
      { type: 'select', name: 'plan', label: 'Plan', options: [{ label: 'Basic', value: 'basic' }, { label: 'Pro', value: 'pro' }] },
    ],
    submitActions: [{ type: 'create_lead', fieldMapping: { firstName: 'first', lastName: 'last', email: 'email', phone: 'phone', 'customFields.plan': 'plan' } }],
  });
  const path = `/api/forms/public/${tenantSlug}/${form.token}/submit`;
  let sent = 0;
  const body = () => {
    const n = sent++;
    return { first: 'Visitor', last: `Number ${n}`, email: `visitor-${n}@example.com`, phone: `+44 20 7946 ${String(n % 10_000).padStart(4, '0')}`, plan: n % 2 ? 'pro' : 'basic' };
  };
  // The phases before it (the workflows' databases) leave dirty buffers: written back first, as the seeded phases do.
  await settle(deps.databaseUrl);
  const submit = await timedLoad(service, `POST ${path.replace(form.token, ':token')}`, { seconds, connections }, () => client.request('POST', path, body()));
  const submissions = (await client.json<{ meta: { total: number } }>('GET', `/api/forms/${form.id}/submissions?limit=1`)).meta.total;
  return { submit, submissions, connections };
}
