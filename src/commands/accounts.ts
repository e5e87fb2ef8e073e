import type { AccountFields } from '../events/accounts.js';
import { syncContactPoints } from '../domain/contact-points.js';
import { liveFields, recordAggregate } from './records/record-aggregate.js';

const plainAccount = recordAggregate<AccountFields, 'Account'>('Account', 'account');

/**
 * An account: a record with notes; its hierarchy and owner are checked before the command
 * (record-commands). `email`/`phone` and their lists stay in step on every write.
 */
export const accountAggregate: typeof plainAccount = {
  ...plainAccount,
  decide(command, state) {
    if (command.kind === 'create') return plainAccount.decide({ ...command, fields: syncContactPoints(null, command.fields) }, state);
    if (command.kind === 'update') return plainAccount.decide({ ...command, changes: syncContactPoints(liveFields(state, 'Account'), command.changes) }, state);
    return plainAccount.decide(command, state);
  },
};
