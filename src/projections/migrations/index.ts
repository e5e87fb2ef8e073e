import type { Knex } from 'knex';
import { migration0001Runtime } from './0001_runtime.js';
import { migration0002AuditTrail } from './0002_audit_trail.js';
import { migration0003ProjectionRebuilds } from './0003_projection_rebuilds.js';
import { migration0004MailOutbox } from './0004_mail_outbox.js';
import { migration0005Identity } from './0005_identity.js';
import { migration0006Records } from './0006_records.js';
import { migration0007RecordTotals } from './0007_record_totals.js';
import { migration0008Leads } from './0008_leads.js';
import { migration0009ParkedEvents } from './0009_parked_events.js';
import { migration0010PendingWritePlans } from './0010_pending_write_plans.js';
import { migration0011SessionEpoch } from './0011_session_epoch.js';
import { migration0012InvitationClaims } from './0012_invitation_claims.js';
import { migration0013LeadJobs } from './0013_lead_jobs.js';

interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** In order of application. A released migration is never edited: add the next one. */
export const migrations: Migration[] = [migration0001Runtime, migration0002AuditTrail, migration0003ProjectionRebuilds, migration0004MailOutbox, migration0005Identity, migration0006Records, migration0007RecordTotals, migration0008Leads, migration0009ParkedEvents, migration0010PendingWritePlans, migration0011SessionEpoch, migration0012InvitationClaims, migration0013LeadJobs];

const source: Knex.MigrationSource<Migration> = {
  getMigrations: async () => migrations,
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

/** Brings the read-model schema up to date; knex's own lock keeps concurrent starts safe. */
export async function migrateToLatest(knex: Knex): Promise<void> {
  await knex.migrate.latest({ migrationSource: source });
}
