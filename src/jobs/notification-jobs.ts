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

/**
 * Hands the deliveries that came due (quiet hours over, digest time reached) to their
 * outbox, a digest's as one mail. The message id is the delivery's, so a crash or a second
 * run sends nothing twice; failed ones stay in the outbox for the retry jobs.
 */
export async function deliverDueNotifications(deps: NotifyDeps & { signal?: AbortSignal }): Promise<number> {
  const due = await dueDeliveries(deps.knex, deps.clock.now(), BATCH);
  const groups = new Map<string, DueDelivery[]>();
  for (const delivery of due) groups.set(delivery.messageId, [...(groups.get(delivery.messageId) ?? []), delivery]);
  for (const group of groups.values()) {
    deps.signal?.throwIfAborted();
    const message = messageOf(group);
    await handOver(deps, message.tenantId, message, message);
  }
  return groups.size;
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
