import type { AccountFields } from '../events/accounts.js';
import { recordAggregate } from './records/record-aggregate.js';

/** An account: a record with notes; its hierarchy and owner are checked before the command (record-commands). */
export const accountAggregate = recordAggregate<AccountFields, 'Account'>('Account', 'account');
