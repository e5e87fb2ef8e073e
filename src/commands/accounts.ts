import type { AccountEvent, AccountFields } from '../events/accounts.js';
import { recordAggregate } from './record-aggregate.js';
import { withNotes } from './records.js';

export const accountAggregate = withNotes<AccountFields, AccountEvent, never>(recordAggregate<AccountFields>('Account', 'account') as never, 'Account');
