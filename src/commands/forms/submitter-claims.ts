import type { Knex } from 'knex';
import { conflict } from '../../domain/errors.js';
import { claimUnique, claimUniqueStatement, releaseUnique } from '../identity/identity-deps.js';

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

/** An address's claim on a form, for one submission. */
export interface SubmitterClaim {
  /** The claim's insert, for the submission's append to carry; null when it was taken up front. */
  readonly statement: string | null;
  /** The address counts as having submitted: takes the claim unless it is taken already (`carried`: by the submission's append). */
  keep(carried: boolean): Promise<void>;
  /** Nothing of the submission was stored or done: the address may try again. */
  release(): Promise<void>;
}

/**
 * With `settings.allowMultiple: false`, takes the address's claim before any submit action
 * runs: a unique row, not a look at earlier submissions, so concurrent submits from one
 * address cannot all pass: only the one that inserts the row goes on, the others are 409.
 *
 * With `allowMultiple` (the default) nothing waits on the claim, so it costs no round trip
 * of its own: the submission's append carries it, or `keep` takes it afterwards.
 */
export async function claimSubmitter(knex: Knex, form: SubmittingForm, address: string, submissionId: string): Promise<SubmitterClaim> {
  const value = submitterClaim(form.tenantId, form.id, address);
  if (form.settings.allowMultiple) {
    return {
      statement: claimUniqueStatement(SUBMITTER_SCOPE, value, submissionId),
      keep: async (carried) => {
        if (!carried) await claimUnique(knex, SUBMITTER_SCOPE, value, submissionId);
      },
      release: async () => {},
    };
  }
  const first = await claimUnique(knex, SUBMITTER_SCOPE, value, submissionId);
  if (!first) throw conflict('This form has already been submitted from here');
  return { statement: null, keep: async () => {}, release: () => releaseUnique(knex, SUBMITTER_SCOPE, value, submissionId) };
}
