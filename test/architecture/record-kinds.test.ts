import { expect } from 'chai';
import { IMPLEMENTED_KINDS, RECORD_KIND_NAMES, type ImplementedKind } from '../../src/domain/record-kinds.js';
import { modules, type ModuleManifest } from '../../src/modules.js';
import { recordKinds } from '../../src/queries/record-registry.js';

/**
 * Record kinds are declared once (src/domain/record-kinds.ts) and registered by the manifest
 * entry of the module that owns them: every kind the service has is owned by exactly one
 * module, a planned kind (the spec names it, no module has it) by none.
 */
export function kindOwners(list: ModuleManifest[] = modules): Map<string, string[]> {
  const owners = new Map<string, string[]>(RECORD_KIND_NAMES.map((kind) => [kind, []]));
  for (const module of list) for (const kind of module.recordKinds ?? []) owners.set(kind, [...(owners.get(kind) ?? []), module.name]);
  return owners;
}

describe('record kinds', () => {
  it('every kind the service has is owned by exactly one manifest entry; planned kinds by none', () => {
    const owners = kindOwners();
    const wrong = [...owners].filter(([kind, by]) => by.length !== ((IMPLEMENTED_KINDS as readonly string[]).includes(kind) ? 1 : 0));
    expect(wrong.map(([kind, by]) => `${kind}: owned by [${by.join(', ')}]`)).to.deep.equal([]);
  });

  it('a kind owned twice or by nobody is reported', () => {
    const twice = kindOwners([...modules, { name: 'copy', recordKinds: ['leads'] }]);
    expect(twice.get('leads')).to.deep.equal(['leads', 'copy']);
    const none = kindOwners(modules.filter((m) => m.name !== 'products'));
    expect(none.get('products')).to.deep.equal([]);
  });

  it('a misspelt or planned kind in a manifest entry does not compile', () => {
    const ok: ImplementedKind[] = ['work_requests'];
    // @ts-expect-error the singular name is not a kind's name
    const singular: ModuleManifest['recordKinds'] = ['lead'];
    // @ts-expect-error projects are planned: no module can own them yet
    const planned: ModuleManifest['recordKinds'] = ['projects'];
    expect([ok, singular, planned]).to.have.length(3);
  });

  it('the record registry queries every kind the service has, its read model named as the kind and guarded by the module of its name', () => {
    // facts/records.ts (lookup fields) relies on the table being named as the kind.
    expect(recordKinds().map((k) => [k.type, k.table, k.module])).to.deep.equal(IMPLEMENTED_KINDS.map((kind) => [kind, kind, kind]));
  });
});
