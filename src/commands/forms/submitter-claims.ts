import type { Knex } from 'knex';
import { conflict } from '../../domain/errors.js';
import { claimUnique, releaseUnique } from '../identity/identity-deps.js';

/**
 * `unique_claims` scope: a client address that has submitted a public form. The first
 * submission from that address holds it (whatever `allowMultiple` says then, so turning
 * `allowMultiple` off later still counts earlier submissions).
 */
export const SUBMITTER_SCOPE = 'form_submitter';
export const submitterClaim = (tenantId: string, formId: string, address: string) => `${tenantId}:${formId}:${address}`;

export interface SubmittingForm {
  id: string;
  tenantId: string;
  settings: { allowMultiple: boolean };
}

/**
 * Takes the address's claim on the form before any submit action runs. A unique row, not a
 * look at earlier submissions, so concurrent submits from one address cannot all pass: with
 * `settings.allowMultiple: false` only the one that inserts the row goes on, the others are
 * 409. Returns what gives the claim back when the submission is not stored after all.
 */
export async function claimSubmitter(knex: Knex, form: SubmittingForm, address: string, submissionId: string): Promise<() => Promise<void>> {
  const value = submitterClaim(form.tenantId, form.id, address);
  const first = await claimUnique(knex, SUBMITTER_SCOPE, value, submissionId);
  if (!first && !form.settings.allowMultiple) throw conflict('This form has already been submitted from here');
  return first ? () => releaseUnique(knex, SUBMITTER_SCOPE, value, submissionId) : async () => {};
}
