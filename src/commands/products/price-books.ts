import type { PriceBookEntryFields, PriceBookEvent, PriceBookFields } from '../../events/products.js';
import { changedFields } from '../../domain/values.js';
import { invalid, notFound } from '../../domain/errors.js';
import { isMoney, roundMoney } from '../../domain/field-rules.js';
import type { Aggregate } from '../aggregate.js';

/**
 * A tenant's price books and their entries: one stream per tenant, so "exactly one default
 * book" and "a quantity resolves to one price" are decided against everything at once.
 */
export interface PriceBooksState {
  books: Record<string, PriceBookFields>;
  entries: Record<string, { priceBookId: string } & PriceBookEntryFields>;
}

export type EntryChanges = Partial<Omit<PriceBookEntryFields, 'productId'>>;

export type PriceBookCommand =
  | { kind: 'seed'; id: string }
  | { kind: 'create-book'; id: string; fields: PriceBookFields }
  | { kind: 'update-book'; id: string; changes: Partial<PriceBookFields> }
  | { kind: 'delete-book'; id: string }
  | { kind: 'add-entry'; priceBookId: string; id: string; fields: PriceBookEntryFields }
  | { kind: 'update-entry'; priceBookId: string; id: string; changes: EntryChanges }
  | { kind: 'remove-entry'; priceBookId: string; id: string };

/** What every tenant starts with (at registration, or by the upgrade seed for older tenants). */
export const STANDARD_BOOK: PriceBookFields = {
  name: 'Standard',
  description: 'Default pricing for all products',
  isDefault: true,
  isActive: true,
  currency: 'USD',
};

const refuse = (path: string, message: string, code = 'invalid') => invalid(message, [{ path, message, code }]);

function checkBook(fields: Partial<PriceBookFields>): void {
  if ('name' in fields && !(typeof fields.name === 'string' && fields.name.trim())) throw refuse('name', 'name is required');
  if ('currency' in fields && !/^[A-Z]{3}$/.test(String(fields.currency))) throw refuse('currency', 'currency must be a 3-letter code such as USD');
}

function checkEntry(entry: PriceBookEntryFields): PriceBookEntryFields {
  if (!isMoney(entry.unitPrice)) throw refuse('unitPrice', 'unitPrice must be an amount of at least 0');
  if (!isMoney(entry.discount)) throw refuse('discount', 'discount must be an amount of at least 0');
  if (!(entry.discountType === 'percentage' || entry.discountType === 'fixed')) throw refuse('discountType', 'discountType is percentage or fixed');
  const rounded = { ...entry, unitPrice: roundMoney(entry.unitPrice), discount: roundMoney(entry.discount) };
  if (rounded.discountType === 'percentage' && rounded.discount > 100) throw refuse('discount', 'A percentage discount is at most 100');
  if (rounded.discountType === 'fixed' && rounded.discount > rounded.unitPrice) throw refuse('discount', 'A fixed discount cannot exceed the unit price');
  const { minimumQuantity: min, maximumQuantity: max } = rounded;
  if (!(typeof min === 'number' && Number.isFinite(min) && min >= 0)) throw refuse('minimumQuantity', 'minimumQuantity must be a number of at least 0');
  if (max !== null && !(typeof max === 'number' && Number.isFinite(max) && max >= min)) {
    throw refuse('maximumQuantity', 'maximumQuantity must be empty (no upper bound) or at least minimumQuantity');
  }
  return rounded;
}

const rangeText = (e: PriceBookEntryFields) => (e.maximumQuantity === null ? `${e.minimumQuantity} and more` : `${e.minimumQuantity}–${e.maximumQuantity}`);

/** Two entries of one product in one book may not both price a quantity (bounds are inclusive). */
function assertNoOverlap(state: PriceBooksState, priceBookId: string, id: string, entry: PriceBookEntryFields): void {
  for (const [otherId, other] of Object.entries(state.entries)) {
    if (otherId === id || other.priceBookId !== priceBookId || other.productId !== entry.productId) continue;
    const disjoint = (entry.maximumQuantity !== null && entry.maximumQuantity < other.minimumQuantity)
      || (other.maximumQuantity !== null && other.maximumQuantity < entry.minimumQuantity);
    if (!disjoint) {
      throw invalid(`This product already has a price for quantities ${rangeText(other)} in this book: quantity ranges of one product may not overlap`, [
        { path: 'minimumQuantity', message: 'overlaps another entry', code: 'overlap', entryId: otherId },
      ]);
    }
  }
}

function book(state: PriceBooksState, id: string): PriceBookFields {
  const found = state.books[id];
  if (!found) throw notFound('Price book');
  return found;
}

const defaultBookId = (state: PriceBooksState) => Object.keys(state.books).find((id) => state.books[id].isDefault);

/** The events that make `id` the default: the old default gives it up in the same append. */
function movingDefault(state: PriceBooksState, id: string): PriceBookEvent[] {
  const current = defaultBookId(state);
  return current && current !== id ? [{ type: 'PriceBookUpdated', data: { id: current, changes: { isDefault: false } } }] : [];
}

function decide(command: PriceBookCommand, state: PriceBooksState): PriceBookEvent[] {
  switch (command.kind) {
    case 'seed':
      // Idempotent: a tenant that has a default book (seeded or not) keeps it.
      return defaultBookId(state) ? [] : [{ type: 'PriceBookCreated', data: { id: command.id, ...STANDARD_BOOK } }];
    case 'create-book': {
      if (state.books[command.id]) throw invalid('Price book already exists');
      checkBook(command.fields);
      const fields = { ...command.fields, isDefault: command.fields.isDefault || !defaultBookId(state) };
      if (fields.isDefault && !fields.isActive) throw refuse('isActive', 'The default price book must be active');
      return [...(fields.isDefault ? movingDefault(state, command.id) : []), { type: 'PriceBookCreated', data: { id: command.id, ...fields } }];
    }
    case 'update-book': {
      const before = book(state, command.id);
      checkBook(command.changes);
      const changes = changedFields(before, command.changes);
      const after = { ...before, ...changes };
      if (before.isDefault && !after.isDefault) throw refuse('isDefault', 'A tenant always has one default price book: make another book the default instead');
      if (after.isDefault && !after.isActive) throw refuse('isActive', 'The default price book must be active');
      if (Object.keys(changes).length === 0) return [];
      return [...(changes.isDefault ? movingDefault(state, command.id) : []), { type: 'PriceBookUpdated', data: { id: command.id, changes } }];
    }
    case 'delete-book':
      if (book(state, command.id).isDefault) throw refuse('id', 'The default price book cannot be deleted: make another book the default first', 'default_book');
      return [{ type: 'PriceBookDeleted', data: { id: command.id } }];
    case 'add-entry': {
      book(state, command.priceBookId);
      if (state.entries[command.id]) throw invalid('Price book entry already exists');
      const fields = checkEntry(command.fields);
      assertNoOverlap(state, command.priceBookId, command.id, fields);
      return [{ type: 'PriceBookEntryAdded', data: { id: command.id, priceBookId: command.priceBookId, ...fields } }];
    }
    case 'update-entry':
    case 'remove-entry': {
      const entry = state.entries[command.id];
      if (!entry || entry.priceBookId !== command.priceBookId) throw notFound('Price book entry');
      if (command.kind === 'remove-entry') return [{ type: 'PriceBookEntryRemoved', data: { id: command.id, priceBookId: command.priceBookId } }];
      const { priceBookId, ...before } = entry;
      const after = checkEntry({ ...before, ...command.changes });
      assertNoOverlap(state, priceBookId, command.id, after);
      const changes = changedFields(before, after);
      return Object.keys(changes).length ? [{ type: 'PriceBookEntryUpdated', data: { id: command.id, priceBookId, changes } }] : [];
    }
  }
}

function evolve(state: PriceBooksState, event: PriceBookEvent): PriceBooksState {
  switch (event.type) {
    case 'PriceBookCreated': {
      const { id, ...fields } = event.data;
      return { ...state, books: { ...state.books, [id]: fields } };
    }
    case 'PriceBookUpdated':
      return state.books[event.data.id] ? { ...state, books: { ...state.books, [event.data.id]: { ...state.books[event.data.id], ...event.data.changes } } } : state;
    case 'PriceBookDeleted': {
      // A deleted book's entries go with it.
      const { [event.data.id]: _gone, ...books } = state.books;
      const entries = Object.fromEntries(Object.entries(state.entries).filter(([, e]) => e.priceBookId !== event.data.id));
      return { books, entries };
    }
    case 'PriceBookEntryAdded': {
      const { id, ...entry } = event.data;
      return { ...state, entries: { ...state.entries, [id]: entry } };
    }
    case 'PriceBookEntryUpdated': {
      const entry = state.entries[event.data.id];
      return entry ? { ...state, entries: { ...state.entries, [event.data.id]: { ...entry, ...event.data.changes } } } : state;
    }
    case 'PriceBookEntryRemoved': {
      const { [event.data.id]: _gone, ...entries } = state.entries;
      return { ...state, entries };
    }
    default:
      return state;
  }
}

/** Stream `price_books-<tenantId>`. */
export const priceBooksAggregate: Aggregate<PriceBooksState, PriceBookEvent, PriceBookCommand> = {
  streamPrefix: 'price_books',
  initialState: { books: {}, entries: {} },
  evolve,
  decide,
};
