import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { allProjections } from '../../src/modules.js';

/**
 * The write side owns its facts: src/commands reaches other modules' read models only through
 * named, typed questions (src/facts), or reads the facts an invariant needs current from their
 * streams. So no file in src/commands names a projection's table, as a knex table, in raw SQL
 * or as a qualified column. The list comes from what the projections declare (`tables`); the
 * write side's own tables (claims, write plans, tokens, counters…) are nobody's projection.
 */
const COMMANDS = path.resolve('src/commands');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Where a table name is used as one: `knex('t')`, `trx('t as x')`, `.from('t')`, `.join('t …')`, `from t` / `join t` in SQL, `'t.column'`. */
function tableUses(text: string, tables: string[]): string[] {
  const names = tables.map(escape).join('|');
  const patterns = [
    new RegExp(`\\b(?:knex|trx|db|from|join|leftJoin|innerJoin|rightJoin|into|table|update|insert)\\s*\\(\\s*['"\`](${names})(?:\\s+as\\s+\\w+)?['"\`]`, 'g'),
    new RegExp(`\\b(?:from|join|update|into)\\s+(${names})\\b`, 'gi'),
    new RegExp(`['"\`](${names})\\.\\w+['"\`]`, 'g'),
  ];
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1]));
}

export function projectionTableReads(): string[] {
  const tables = [...new Set(allProjections().flatMap((p) => p.tables))];
  return sourceFiles(COMMANDS).flatMap((file) => {
    const text = fs.readFileSync(file, 'utf8');
    return [...new Set(tableUses(text, tables))].map((table) => `${path.relative(path.resolve('src'), file)} reads ${table}`);
  }).sort();
}

describe('the write side', () => {
  it('names no projection table in src/commands (facts come through src/facts or from streams)', () => {
    expect(projectionTableReads()).to.deep.equal([]);
  });

  it('would notice a table read (the check itself)', () => {
    const tables = ['users', 'lead_settings'];
    expect(tableUses("await knex('users').where({ id })", tables)).to.deep.equal(['users']);
    expect(tableUses("trx('lead_settings as s').whereRaw('s.tenant_id = t.id')", tables)).to.deep.equal(['lead_settings']);
    expect(tableUses('select id from users where tenant_id = ?', tables)).to.deep.equal(['users']);
    expect(tableUses(".where('users.id', id)", tables)).to.deep.equal(['users']);
    expect(tableUses("checkedRecordWrite(deps, tenantId, 'users', input)", tables)).to.deep.equal([]);
  });
});
