import type { Knex } from 'knex';
export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/**
 * Brings the read-model schema up to date with the given migrations (every module's, see
 * src/modules.ts), in name order; knex's own lock keeps concurrent starts safe.
 */
export async function migrateToLatest(knex: Knex, migrations: Migration[]): Promise<void> {
  const ordered = [...migrations].sort((a, b) => a.name.localeCompare(b.name));
  const source: Knex.MigrationSource<Migration> = {
    getMigrations: async () => ordered,
    getMigrationName: (m) => m.name,
    getMigration: async (m) => m,
  };
  await knex.migrate.latest({ migrationSource: source });
}
