import type { AnyRecorded, RecordedOf } from '../events/app-events.js';
import type { RecordedEvent } from '../events/store/types.js';
import { isRegistryType, SINGULAR_OF, singularsWith } from '../domain/record-kinds.js';
import { deterministicId } from '../infra/deterministic-id.js';
import { defineProjection } from './projection.js';
import type { ReadModelWriter } from './writer.js';

/** Stream prefixes of the records that have a timeline and notes (declared in domain/record-kinds.ts). */
export const RECORD_KINDS = singularsWith('timeline');
const kinds = new Set<string>(RECORD_KINDS);

interface Activity {
  recordType: string;
  recordId: string;
  activityType: string;
  title: string;
  description?: string | null;
}

/** `work_request` → `Work request` (titles) and `WorkRequest` (its events' prefix). */
const capitalised = (kind: string) => kind[0].toUpperCase() + kind.slice(1).replace(/_/g, ' ');
const eventPrefix = (kind: string) => kind.split('_').map((part) => part[0].toUpperCase() + part.slice(1)).join('');

/**
 * At most `max` UTF-16 units of `text`, never ending inside a surrogate pair: half an
 * emoji is not valid text, and PostgreSQL refuses the row (the projection would stop).
 */
function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c, i) => `${i ? '_' : ''}${c.toLowerCase()}`);

/** What a record's `…Updated` event changed (every kind's update carries `changes`). */
const changesOf = (e: AnyRecorded): object | undefined => ('changes' in e.data ? e.data.changes : undefined);

/**
 * What an event shows on record timelines. Created / Updated / Deleted and notes read
 * the same for every kind; a few events speak of two records (a link shows on both).
 */
function activitiesOf(e: AnyRecorded, kind: string, recordId: string): Activity[] {
  const on = (activityType: string, title: string, description?: string | null): Activity => ({
    recordType: kind,
    recordId,
    activityType,
    title,
    description,
  });
  // A task linked to a record also shows on that record's timeline.
  const onLinked = (activityType: string, title: string, link: { entityType?: string | null; entityId?: string | null } | null): Activity[] =>
    kind === 'task' && link?.entityType && link.entityId ? [{ recordType: link.entityType, recordId: link.entityId, activityType, title }] : [];
  switch (e.type) {
    case 'TaskCreated':
      return [on('created', 'Task created'), ...onLinked('task_created', `Task created: ${e.data.title}`, e.data)];
    case 'TaskCompleted':
      return [on('completed', 'Task completed', e.data.completionNotes), ...onLinked('task_completed', `Task completed: ${e.data.title}`, e.data.link)];
    case 'OpportunityReopened':
      return [on('opportunity_reopened', `Reopened in ${e.data.toStageName}`, e.data.reason)];
    case 'OpportunityWon':
      return [on('opportunity_won', 'Opportunity won', e.data.notes)];
    case 'OpportunityLost':
      return [on('opportunity_lost', 'Opportunity lost', e.data.notes)];
    case 'NoteAdded':
      return [on('note_added', 'Note added', clipText(String(e.data.content), 500))];
    case 'ContactLinkedToAccount':
      return [
        on('account_linked', `Linked to an account as ${e.data.role}`),
        { recordType: 'account', recordId: e.data.accountId, activityType: 'contact_linked', title: `Contact linked as ${e.data.role}` },
      ];
    case 'ContactUnlinkedFromAccount':
      return [
        on('account_unlinked', 'Unlinked from an account'),
        { recordType: 'account', recordId: e.data.accountId, activityType: 'contact_unlinked', title: 'Contact unlinked' },
      ];
    case 'OpportunityContactAdded':
      return [on('contact_added', `Contact added as ${e.data.role}`, e.data.notes)];
    case 'OpportunityLineItemAdded':
      return [on('line_item_added', `Line item added: ${e.data.productName}`, e.data.description)];
    // One type for every kind's stage move (leads, opportunities, work requests): the spec's `stage_change`.
    case 'LeadStageChanged':
    case 'OpportunityStageChanged':
      return [on('stage_change', `Stage changed from ${e.data.fromStageName} to ${e.data.toStageName}`, e.data.unlockReason)];
    case 'WorkRequestStageChanged':
      return [on('stage_change', `Stage changed from ${e.data.fromStageName} to ${e.data.toStageName}`, e.data.note)];
    case 'LeadScoreChanged':
      return [on('score_changed', `Score changed from ${e.data.from} to ${e.data.to}`)];
    case 'LeadConverted':
      return [on('converted', 'Lead converted', e.data.notes)];
    case 'ContactTimelineCopied':
      return [on('history_copied', `Copied ${e.data.notes.length} note(s) and ${e.data.activities.length} activit${e.data.activities.length === 1 ? 'y' : 'ies'} from the converted ${e.data.fromRecordType}`)];
    case 'LeadDisqualified':
      return [on('disqualified', `Disqualified: ${e.data.reason}`, e.data.notes)];
    case 'LeadFirstResponseRecorded':
      return [on('sla_met', e.data.late ? 'SLA met (after breach)' : 'SLA met')];
    case 'LeadSlaBreached':
      return [on('sla_breached', 'First-response SLA breached')];
    case 'LeadSlaEscalated':
      return [on('sla_escalated', 'First-response SLA escalated')];
  }
  // The rest read the same for every kind: `<Kind>Created`, `<Kind>Updated` (what changed), and so on.
  const prefix = eventPrefix(kind);
  const name = e.type.startsWith(prefix) ? e.type.slice(prefix.length) : e.type;
  switch (name) {
    case 'Created':
      return [on('created', `${capitalised(kind)} created`)];
    case 'Completed':
      return [on('completed', `${capitalised(kind)} completed`)];
    case 'Reopened':
      return [on('reopened', `${capitalised(kind)} reopened`)];
    case 'Updated':
      return [on('updated', `Updated: ${Object.keys(changesOf(e) ?? {}).join(', ')}`)];
    case 'Deleted':
      return [on('deleted', `${capitalised(kind)} deleted`)];
    default:
      return [on(snake(name), name.replace(/[A-Z]/g, (c, i) => `${i ? ' ' : ''}${i ? c.toLowerCase() : c}`))];
  }
}

/** Copied notes and activities keep their author and time; their ids derive from the copy event's, so a rebuild makes the same rows. */
function copyTimeline(e: RecordedOf<'ContactTimelineCopied'>, kind: string, recordId: string, w: ReadModelWriter): void {
  const base = { tenant_id: e.metadata.tenantId, record_type: kind, record_id: recordId };
  for (const note of e.data.notes) {
    w.insert('record_notes', { ...base, id: deterministicId('copied-note', e.id, note.noteId), content: note.content, created_by: note.createdBy, created_at: note.createdAt });
  }
  for (const a of e.data.activities) {
    w.insert('record_activities', {
      ...base,
      id: deterministicId('copied-activity', e.id, a.activityId),
      activity_type: a.activityType,
      title: a.title,
      description: a.description,
      performed_by: a.performedBy,
      created_at: a.createdAt,
    });
  }
}

/** A manual link shows on both records' timelines (spec: `record_linked` / `record_unlinked`). */
function linkActivities(e: RecordedOf<'AssociationLinked'> | RecordedOf<'AssociationUnlinked'>): Activity[] {
  const linked = e.type === 'AssociationLinked';
  const ends = [
    [e.data.sourceType, e.data.sourceId, e.data.targetType],
    [e.data.targetType, e.data.targetId, e.data.sourceType],
  ] as const;
  return ends.map(([type, id, other]) => ({
    recordType: isRegistryType(type) ? SINGULAR_OF[type] : type,
    recordId: id,
    activityType: linked ? 'record_linked' : 'record_unlinked',
    title: `${linked ? 'Linked to' : 'Unlinked from'} a ${isRegistryType(other) ? SINGULAR_OF[other].replace('_', ' ') : other}`,
    description: e.data.label,
  }));
}

/** An event's activities; the first keeps the event's id, the others derive theirs from it. */
function insertActivities(e: RecordedEvent, w: ReadModelWriter, activities: Activity[]): void {
  activities.forEach((a, n) =>
    w.insert('record_activities', {
      id: n === 0 ? e.id : deterministicId('activity', e.id, String(n)),
      tenant_id: e.metadata.tenantId,
      record_type: a.recordType,
      record_id: a.recordId,
      activity_type: a.activityType,
      title: a.title,
      description: a.description ?? null,
      performed_by: e.metadata.userId,
      created_at: e.createdAt,
    }),
  );
}

/** A file attached to or removed from a record shows on the record's timeline (its name only, never its bytes or key). */
function documentActivities(e: AnyRecorded): Activity[] {
  if (e.type === 'DocumentUploaded') {
    return [{ recordType: e.data.recordType, recordId: e.data.recordId, activityType: 'document_uploaded', title: `Document uploaded: ${clipText(e.data.name, 200)}` }];
  }
  if (e.type === 'DocumentDeleted') return [{ recordType: e.data.recordType, recordId: e.data.recordId, activityType: 'document_deleted', title: 'Document deleted' }];
  return [];
}

function write(e: AnyRecorded, w: ReadModelWriter): void {
  const dash = e.streamId.indexOf('-');
  const kind = e.streamId.slice(0, dash);
  if (kind === 'association') return e.type === 'AssociationLinked' || e.type === 'AssociationUnlinked' ? insertActivities(e, w, linkActivities(e)) : undefined;
  if (kind === 'document') return insertActivities(e, w, documentActivities(e));
  if (!kinds.has(kind)) return;
  const recordId = e.streamId.slice(dash + 1);
  insertActivities(e, w, activitiesOf(e, kind, recordId));
  if (e.type === 'ContactTimelineCopied') copyTimeline(e, kind, recordId, w);
  if (e.type === 'NoteAdded') {
    w.insert('record_notes', {
      id: e.data.noteId,
      tenant_id: e.metadata.tenantId,
      record_type: kind,
      record_id: recordId,
      content: e.data.content,
      created_by: e.metadata.userId,
      created_at: e.createdAt,
    });
  }
}

/** The activities timeline and notes of every record kind, from the records' own events. */
export const recordTimelineProjection = defineProjection({
  name: 'record-timeline',
  tables: ['record_activities', 'record_notes'],
  handlers: {},
  otherwise: write,
});
