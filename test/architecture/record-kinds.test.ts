import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { IMPLEMENTED_KINDS, RECORD_KIND_NAMES, SINGULAR_OF, type ImplementedKind } from '../../src/domain/record-kinds.js';
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

const SRC = path.resolve('src');

/** Files whose lists of kind names mean something else, or must not change. */
const OTHER_LISTS: Record<string, string> = {
  'domain/record-kinds.ts': 'the declaration itself',
  'domain/permissions.ts': 'the permission vocabulary (modules, with reports, users, settings…) and the seeded roles\' grants',
  'queries/table-columns.ts': 'the modules with list columns (with users and roles)',
  'queries/dashboard/activity.ts': 'the dashboard names the records of the four sales kinds',
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Array literals in src naming three or more record kinds (plural or singular): a registry of kinds written by hand. */
export function handWrittenKindLists(): string[] {
  const names = new Set<string>([...RECORD_KIND_NAMES, ...Object.values(SINGULAR_OF)]);
  return sourceFiles(SRC).flatMap((file) => {
    const relative = path.relative(SRC, file).split(path.sep).join('/');
    // Released migrations never change.
    if (relative.startsWith('projections/migrations/') || OTHER_LISTS[relative]) return [];
    const text = fs.readFileSync(file, 'utf8');
    return [...text.matchAll(/\[([^[\]]{0,400})\]/g)].flatMap((list) => {
      const kinds = new Set([...list[1].matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).filter((name) => names.has(name)));
      return kinds.size >= 3 ? [`${relative}: [${[...kinds].join(', ')}]`] : [];
    });
  });
}

describe('record kinds', () => {
  it('no list of record kinds is written by hand outside their declaration (src/domain/record-kinds.ts)', () => {
    expect(handWrittenKindLists()).to.deep.equal([]);
  });

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
