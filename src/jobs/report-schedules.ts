import type { Knex } from 'knex';
import type { CommandDeps } from '../commands/aggregate.js';
import { markScheduleSent, updateSchedule } from '../commands/reports/report-commands.js';
import { can, type Principal } from '../domain/principal.js';
import { nextRunAt } from '../domain/report-schedules.js';
import type { ExportFormat } from '../events/reports.js';
import { deterministicId } from '../infra/deterministic-id.js';
import type { Logger } from '../infra/logger.js';
import type { Mailer } from '../infra/mailer.js';
import { loadApiKeyPrincipal } from '../queries/api-keys.js';
import { loadPrincipal } from '../queries/principal.js';
import { storedDefinition, tenantSourceOrFail } from '../queries/reports/definition.js';
import { EXPORT_TYPES, exportBuffer, exportFileName } from '../queries/reports/export.js';
import { dueSchedules, reportDefinition } from '../queries/reports/reports.js';

/** `signal`: a scheduled run's (see Job in scheduler.ts); aborted, the run stops before the next schedule. */
type Deps = CommandDeps & { knex: Knex; mailer: Mailer; logger?: Logger; timeoutMs: number; signal?: AbortSignal };

/**
 * Who a due schedule's report runs as: the API key that set the schedule up (or, failing
 * that, created the report) while that key is valid, with the key's role; else the report's
 * creator. A key acts for the administrator who made it, but a run it set up must not reach
 * beyond the key's role or outlive the key.
 */
async function runAs(deps: Deps, s: { tenant_id: string; configured_by_api_key: string | null; report_created_by_api_key: string | null; report_created_by: string | null }, now: Date): Promise<Principal | null> {
  const keyId = s.configured_by_api_key ?? s.report_created_by_api_key;
  if (keyId) return loadApiKeyPrincipal(deps.knex, s.tenant_id, keyId, now);
  return s.report_created_by ? loadPrincipal(deps.knex, s.tenant_id, s.report_created_by) : null;
}

/** Schedules one run takes on (oldest due first); the rest wait a minute. */
const RUN_LIMIT = 20;

/**
 * Sends every due report schedule: the report run as its creator (their scope today; see runAs),
 * exported and mailed to each recipient, then `ReportScheduleSent` with the next due time.
 * A due time is sent once: the mails' ids and the event's id derive from (schedule, due
 * time), so a run cut short and repeated neither mails twice nor records twice.
 */
export async function runDueSchedules(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  let sent = 0;
  for (const s of await dueSchedules(deps.knex, now, RUN_LIMIT)) {
    deps.signal?.throwIfAborted();
    const dueAt = new Date(s.next_run_at).toISOString();
    const ctx = { tenantId: s.tenant_id, userId: null, correlationId: deterministicId('report-schedule-run', s.id, dueAt) };
    try {
      const principal = await runAs(deps, s, now);
      const report = principal ? await reportDefinition(deps.knex, principal, s.report_id) : null;
      const checked = report ? storedDefinition(report, await tenantSourceOrFail(deps.knex, s.tenant_id, report.dataSource)) : null;
      if (!principal || principal.status !== 'active' || !report || !checked || !can(principal, 'reports', 'view') || !can(principal, checked.source.module, 'view')) {
        // Sent as nobody: the schedule is paused (its owner or an admin may switch it back on), rather than retried every minute.
        await updateSchedule(deps, ctx, s.report_id, s.id, { isActive: false }, deterministicId('report-schedule-paused', s.id, dueAt));
        deps.logger?.warn({ scheduleId: s.id, tenantId: s.tenant_id }, 'report schedule paused: whoever it runs as can no longer run the report');
        continue;
      }
      const { source, definition } = checked;
      const format = s.format as ExportFormat;
      const { content, rows } = await exportBuffer(deps.knex, principal, { input: { source, definition, now }, format, title: report.name, timeoutMs: deps.timeoutMs });
      const filename = exportFileName(report.name, now, format);
      for (const to of s.recipients as string[]) {
        await deps.mailer.send({
          id: deterministicId('report-schedule-mail', s.id, dueAt, to),
          tenantId: s.tenant_id,
          kind: 'report_schedule',
          to,
          subject: `Report: ${report.name}`,
          text: `The scheduled report "${report.name}" (${rows} rows) is attached as ${filename}.`,
          attachments: [{ filename, contentType: EXPORT_TYPES[format], content }],
        });
      }
      const next = nextRunAt({ frequency: s.frequency, dayOfWeek: s.day_of_week, dayOfMonth: s.day_of_month, time: s.time, timeZone: s.time_zone }, now);
      await markScheduleSent(deps, ctx, { id: s.report_id, scheduleId: s.id, dueAt, sentAt: now.toISOString(), nextRunAt: next.toISOString(), rows }, deterministicId('report-schedule-sent', s.id, dueAt));
      sent++;
    } catch (error) {
      // One schedule's failure (a timeout on a large tenant) leaves it due: the next run tries again.
      deps.logger?.error({ err: error, scheduleId: s.id, tenantId: s.tenant_id }, 'report schedule failed; it stays due');
    }
  }
  return sent;
}
