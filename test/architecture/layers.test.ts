import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

/**
 * Imports point down: domain (pure types, rules and errors every layer shares)
 * ← infra ← events ← facts (the write side's typed reads of read models) ← commands ← projections ← queries ← sagas ← jobs (scheduled work) ← http ← the entry points
 * (service, modules, main) ← cli. A layer may import its own folder and any layer below
 * it: queries read what projections declare of the read models, sagas pick their work with
 * queries. The one way up that is allowed: http routers name the `Services` type of
 * service.ts.
 */
const SRC = path.resolve('src');
const RANK: Record<string, number> = { domain: 0, infra: 1, events: 2, facts: 2.5, commands: 3, projections: 4, queries: 5, sagas: 6, jobs: 6.5, http: 7, '.': 8, cli: 9 };

function layerOf(file: string): string {
  const [first] = path.relative(SRC, file).split(path.sep);
  return first.endsWith('.ts') ? '.' : first;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g;

export function layerViolations(): string[] {
  const violations: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = layerOf(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[3] ?? match[4];
      const target = path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts'));
      const to = layerOf(target);
      if (to === from) continue;
      const servicesType = from === 'http' && path.relative(SRC, target) === 'service.ts' && match[2] !== undefined;
      const down = RANK[to] < RANK[from];
      if (!down && !servicesType) violations.push(`${path.relative(SRC, file)} imports ${path.relative(SRC, target)} (${from} → ${to})`);
    }
  }
  return violations.sort();
}

describe('the layers of src/', () => {
  it('import only downwards', () => {
    expect(layerViolations()).to.deep.equal([]);
  });
});
