import { handOver, notifyUser, type NotifyDeps } from '../commands/notifications/notify-user.js';
import { escapeHtml } from '../domain/notifications.js';
import { deterministicId } from '../infra/deterministic-id.js';
import { dueDeliveries, existingNotifications, tasksDueSoon, type DueDelivery } from '../queries/notifications.js';

const BATCH = 500;
const DAY_MS = 86_400_000;

/** One message for the deliveries sharing a message id: the delivery itself, or a digest listing each. */
function messageOf(group: DueDelivery[]) {
  const [first] = group;
  if (group.length === 1 && !first.digest) return first;
  const subject = `Your notifications digest (${group.length})`;
  const text = group.map((d) => `${d.subject}\n${d.text}`).join('\n\n---\n\n');
  const html = group.map((d) => `<h3>${escapeHtml(d.subject)}</h3>\n<div>${d.html}</div>`).join('\n<hr>\n');
  return { ...first, subject, text, html };
}

/** Batches one run goes through at most: a run stays bounded however much came due at once. */
const MAX_BATCHES = 20;
/** The deliveries one digest lists at most. */
const DIGEST_MAX = 10_000;

/**
 * Hands the deliveries that came due (quiet hours over, digest time reached) to their
 * outbox, a digest's as one mail. The message id is the delivery's, so a crash or a second
 * run sends nothing twice; failed ones stay in the outbox for the retry jobs. Batch after
 * batch while they are full (the end of a tenant's quiet hours releases everything it held
 * at once): a batch ends with a message whose deliveries may go on in the next, so that
 * message waits for it, unless it is all the batch holds.
 */
export async function deliverDueNotifications(deps: NotifyDeps & { signal?: AbortSignal }, batch = BATCH): Promise<number> {
  const handed = new Set<string>();
  for (let round = 0; round < MAX_BATCHES; round++) {
    const due = await dueDeliveries(deps.knex, deps.clock.now(), batch);
    const groups = new Map<string, DueDelivery[]>();
    for (const delivery of due) groups.set(delivery.messageId, [...(groups.get(delivery.messageId) ?? []), delivery]);
    const full = due.length === batch;
    const last = due[due.length - 1]?.messageId;
    if (full && groups.size > 1) groups.delete(last);
    // One message fills the batch (a digest of many): all of it, so that none of its deliveries is left out of the mail.
    else if (full) groups.set(last, await dueDeliveries(deps.knex, deps.clock.now(), DIGEST_MAX, last));
    let fresh = 0;
    for (const [messageId, group] of groups) {
      deps.signal?.throwIfAborted();
      // Handed over before in this run and due still (nothing was stored for it): not again in this run.
      if (handed.has(messageId)) continue;
      handed.add(messageId);
      fresh++;
      const message = messageOf(group);
      await handOver(deps, message.tenantId, message, message);
    }
    if (!full || fresh === 0) break;
  }
  return handed.size;
}

/**
 * "Task due" reminders: once per task, assignee and due date, for open tasks due within a
 * day (or whose reminder time came), by no user. The id derives from the three, so the
 * same reminder is never made twice whichever process runs the job.
 */
export async function remindTasksDue(deps: NotifyDeps & { signal?: AbortSignal }): Promise<number> {
  const now = deps.clock.now();
  const tasks = await tasksDueSoon(deps.knex, now, DAY_MS, BATCH);
  const idOf = (t: (typeof tasks)[number]) => deterministicId('task-due', t.id, t.assignedTo, t.dueDate.toISOString());
  const done = new Set(await existingNotifications(deps.knex, tasks.map(idOf)));
  let sent = 0;
  for (const task of tasks) {
    deps.signal?.throwIfAborted();
    const id = idOf(task);
    if (done.has(id)) continue;
    const dueLabel = task.dueDate.getTime() <= now.getTime() ? 'now' : `at ${task.dueDate.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    const created = await notifyUser(deps, { tenantId: task.tenantId, userId: null, correlationId: id }, {
      userId: task.assignedTo, type: 'task_due', title: `Task due: ${task.title}`, message: `The task "${task.title}" is due ${dueLabel}`,
      entityType: 'tasks', entityId: task.id, variables: { taskTitle: task.title, dueDate: task.dueDate.toISOString(), dueLabel },
    }, { id, eventIds: (index) => deterministicId('task-due-event', id, String(index)) });
    if (created) sent++;
  }
  return sent;
}
