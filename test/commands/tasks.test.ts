import { expect } from 'chai';
import { taskAggregate, type TaskContext, type TaskInput } from '../../src/commands/tasks/task-aggregate.js';
import { emptyTaskSettings, type TaskSettingsState } from '../../src/domain/task-settings.js';
import type { TaskEvent } from '../../src/events/tasks.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const ID = '00000000-0000-4000-8000-000000000001';
const PARENT = '00000000-0000-4000-8000-000000000002';
const USER = '00000000-0000-4000-8000-0000000000aa';
const CONTACT = '00000000-0000-4000-8000-0000000000cc';

const lookup = { color: '#3B82F6', icon: null, isActive: true, isSystem: true };
function settingsState(): TaskSettingsState {
  const s = emptyTaskSettings();
  s.seeded = true;
  s.types = {
    todo: { ...lookup, name: 'To-Do', slug: 'todo', position: 1, description: null, defaultDurationMinutes: null },
    call: { ...lookup, name: 'Call', slug: 'call', position: 2, description: null, defaultDurationMinutes: null },
    old: { ...lookup, name: 'Old', slug: 'old', position: 3, description: null, defaultDurationMinutes: null, isActive: false },
  };
  s.statuses = {
    not_started: { ...lookup, name: 'Not Started', slug: 'not_started', position: 1, isDefault: true, isOpen: true, isCompleted: false },
    in_progress: { ...lookup, name: 'In Progress', slug: 'in_progress', position: 2, isDefault: false, isOpen: true, isCompleted: false },
    completed: { ...lookup, name: 'Completed', slug: 'completed', position: 5, isDefault: false, isOpen: false, isCompleted: true },
  };
  s.priorities = {
    high: { ...lookup, name: 'High', slug: 'high', position: 2, level: 3, isDefault: false },
    medium: { ...lookup, name: 'Medium', slug: 'medium', position: 3, level: 2, isDefault: true },
  };
  return s;
}
const NOW = new Date('2026-01-05T09:00:00Z');
const context = (change: (s: TaskSettingsState) => void = () => {}): TaskContext => {
  const settings = settingsState();
  change(settings);
  return { settings, now: NOW };
};

const input: TaskInput = {
  title: 'Call back', description: null, assignedTo: null, dueDate: null, reminderAt: null, entityType: null, entityId: null, parentTaskId: null,
};
const createdData = {
  id: ID, title: 'Call back', description: null, typeId: 'todo', statusId: 'not_started', priorityId: 'medium', assignedTo: USER,
  dueDate: null, reminderAt: null, entityType: null, entityId: null, parentTaskId: null, depth: 0,
};
const created: TaskEvent = { type: 'TaskCreated', data: createdData };
const completed: TaskEvent = { type: 'TaskCompleted', data: { id: ID, statusId: 'completed', completedAt: NOW.toISOString(), completionNotes: 'done', title: 'Call back', link: null } };

describe('task decider', () => {
  const spec = deciderSpec(taskAggregate);
  const create = (fields: Partial<TaskInput> = {}, parent: { id: string; depth: number } | null = null) =>
    ({ kind: 'create' as const, id: ID, fields: { ...input, ...fields }, actorId: USER, parent });

  describe('create', () => {
    it('takes the default type, status and priority, and assigns the creator', () => {
      spec.given([]).when(create(), context()).then([created]);
    });

    it('keeps given lookups and assignee', () => {
      const decision = spec.given([]).when(create({ typeId: 'call', statusId: 'in_progress', priorityId: 'high', assignedTo: PARENT }), context());
      expect(decision.events[0].data).to.include({ typeId: 'call', statusId: 'in_progress', priorityId: 'high', assignedTo: PARENT });
    });

    it('leaves a task unassigned when autoAssignToCreator is off', () => {
      const decision = spec.given([]).when(create(), context((s) => (s.settings.general = { autoAssignToCreator: false })));
      expect(decision.events[0].data).to.include({ assignedTo: null });
    });

    it('refuses unknown or inactive lookups, and a completed status', () => {
      spec.given([]).when(create({ typeId: 'nope' }), context()).then(refused('invalid', /typeId does not name/));
      spec.given([]).when(create({ typeId: 'old' }), context()).then(refused('invalid', /inactive/));
      spec.given([]).when(create({ priorityId: 'nope' }), context()).then(refused('invalid'));
      spec.given([]).when(create({ statusId: 'completed' }), context()).then(refused('invalid', /cannot start completed/));
    });

    it('refuses without defaults to fall back on (settings not seeded)', () => {
      spec.given([]).when(create(), { settings: emptyTaskSettings(), now: NOW }).then(refused('invalid', /No default/));
    });

    it('needs a title, a complete link and a due date when the setting asks for one', () => {
      spec.given([]).when(create({ title: '  ' }), context()).then(refused('invalid'));
      spec.given([]).when(create({ entityType: 'contact' }), context()).then(refused('invalid', /go together/));
      spec.given([]).when(create(), context((s) => (s.settings.general = { requireDueDate: true }))).then(refused('invalid', /dueDate is required/));
      const linked = spec.given([]).when(create({ entityType: 'contact', entityId: CONTACT, dueDate: '2026-01-06T00:00:00.000Z' }), context());
      expect(linked.events[0].data).to.include({ entityType: 'contact', entityId: CONTACT });
    });

    it('nests subtasks up to general.maxSubtaskDepth', () => {
      expect(spec.given([]).when(create({}, { id: PARENT, depth: 0 }), context()).events[0].data).to.include({ parentTaskId: PARENT, depth: 1 });
      expect(spec.given([]).when(create({}, { id: PARENT, depth: 1 }), context()).events[0].data).to.include({ depth: 2 });
      spec.given([]).when(create({}, { id: PARENT, depth: 2 }), context()).then(refused('invalid', /Maximum subtask depth of 2 reached/));
      spec.given([]).when(create({}, { id: PARENT, depth: 0 }), context((s) => (s.settings.general = { allowSubtasks: false }))).then(refused('invalid', /turned off/));
    });
  });

  describe('update', () => {
    it('records only what changes', () => {
      spec.given([created]).when({ kind: 'update', id: ID, changes: { title: 'Call back', priorityId: 'high' } }, context())
        .then([{ type: 'TaskUpdated', data: { id: ID, changes: { priorityId: 'high' } } }]);
      spec.given([created]).when({ kind: 'update', id: ID, changes: { title: 'Call back' } }, context()).then([]);
    });

    it('moves between open statuses but never into the completed one, nor out of it', () => {
      spec.given([created]).when({ kind: 'update', id: ID, changes: { statusId: 'in_progress' } }, context())
        .then([{ type: 'TaskUpdated', data: { id: ID, changes: { statusId: 'in_progress' } } }]);
      spec.given([created]).when({ kind: 'update', id: ID, changes: { statusId: 'completed' } }, context()).then(refused('invalid', /POST \/tasks\/:id\/complete/));
      spec.given([created, completed]).when({ kind: 'update', id: ID, changes: { statusId: 'in_progress' } }, context()).then(refused('invalid', /reopen/));
      spec.given([created]).when({ kind: 'update', id: ID, changes: { typeId: 'old' } }, context()).then(refused('invalid', /inactive/));
    });
  });

  describe('complete and reopen', () => {
    it('completes once, to the completed status, with the link for the linked record', () => {
      const linked: TaskEvent = { type: 'TaskCreated', data: { ...createdData, entityType: 'contact', entityId: CONTACT } };
      spec.given([linked]).when({ kind: 'complete', id: ID, completionNotes: 'done' }, context())
        .then([{ type: 'TaskCompleted', data: { ...completed.data, link: { entityType: 'contact', entityId: CONTACT } } as never }]);
      spec.given([created, completed]).when({ kind: 'complete', id: ID, completionNotes: null }, context()).then(refused('invalid', /already completed/));
    });

    it('reopens a completed task to the default open status, and refuses an open one', () => {
      const decision = spec.given([created, completed]).when({ kind: 'reopen', id: ID }, context());
      expect(decision.events).to.deep.equal([{ type: 'TaskReopened', data: { id: ID, statusId: 'not_started' } }]);
      expect(decision.state).to.deep.include({ status: 'active' });
      expect((decision.state as { fields: { completed: boolean } }).fields.completed).to.equal(false);
      spec.given([created]).when({ kind: 'reopen', id: ID }, context()).then(refused('invalid', /not completed/));
    });

    it('a deleted or absent task is not found', () => {
      const deleted: TaskEvent[] = [created, { type: 'TaskDeleted', data: { id: ID } }];
      for (const command of [{ kind: 'complete', id: ID, completionNotes: null }, { kind: 'reopen', id: ID }, { kind: 'delete', id: ID }, { kind: 'update', id: ID, changes: { title: 'x' } }] as const) {
        spec.given(deleted).when(command, context()).then(refused('not_found'));
        spec.given([]).when(command, context()).then(refused('not_found'));
      }
    });
  });

  it('every kind of task command is plain data: through JSON it decides the same', () => {
    const cases = [
      [[], create({ entityType: 'contact', entityId: CONTACT, dueDate: '2026-01-06T00:00:00.000Z' }, { id: PARENT, depth: 0 })],
      [[created], { kind: 'update', id: ID, changes: { title: 'New', statusId: 'in_progress' } }],
      [[created], { kind: 'delete', id: ID }],
      [[created], { kind: 'complete', id: ID, completionNotes: 'ok' }],
      [[created, completed], { kind: 'reopen', id: ID }],
      [[created], { kind: 'add-note', id: ID, noteId: PARENT, content: 'hi' }],
    ] as const;
    expect(new Set(cases.map(([, command]) => command.kind)).size).to.equal(6);
    for (const [history, command] of cases) {
      const replayed = JSON.parse(JSON.stringify(command));
      expect(replayed).to.deep.equal(command);
      const decided = spec.given(history as unknown as TaskEvent[]).when(command as never, context()).events;
      expect(decided).to.not.be.empty;
      expect(spec.given(history as unknown as TaskEvent[]).when(replayed, context()).events).to.deep.equal(decided);
    }
  });
});

describe('task decider: mark-overdue (task_overdue)', () => {
  const spec = deciderSpec(taskAggregate);
  const DUE = '2026-01-05T08:00:00.000Z';
  const dated: TaskEvent = { type: 'TaskCreated', data: { ...createdData, dueDate: DUE } };
  const mark = (dueDate = DUE) => ({ kind: 'mark-overdue' as const, id: ID, dueDate });
  const overdue: TaskEvent = { type: 'TaskBecameOverdue', data: { id: ID, dueDate: DUE } };

  it('an open task past its due date becomes overdue, once for that due date', () => {
    spec.given([dated]).when(mark(), context()).then([overdue]);
    spec.given([dated, overdue]).when(mark(), context()).then([]);
  });
  it('not before its due date, nor when completed, closed (cancelled), moved since the job read it, or gone', () => {
    spec.given([{ type: 'TaskCreated', data: { ...createdData, dueDate: '2026-01-05T10:00:00.000Z' } }]).when(mark('2026-01-05T10:00:00.000Z'), context()).then([]);
    spec.given([dated, { ...completed, data: { ...completed.data } }]).when(mark(), context()).then([]);
    spec.given([dated, { type: 'TaskUpdated', data: { id: ID, changes: { statusId: 'cancelled' } } }]).when(mark(), context((s) => {
      s.statuses.cancelled = { ...s.statuses.completed, name: 'Cancelled', slug: 'cancelled', isCompleted: false };
    })).then([]);
    spec.given([dated, { type: 'TaskUpdated', data: { id: ID, changes: { dueDate: '2026-01-06T08:00:00.000Z' } } }]).when(mark(), context()).then([]);
    spec.given([dated, { type: 'TaskDeleted', data: { id: ID } }]).when(mark(), context()).then([]);
  });
  it('a task moved to a later date and missed again becomes overdue again', () => {
    const moved: TaskEvent = { type: 'TaskUpdated', data: { id: ID, changes: { dueDate: '2026-01-05T08:30:00.000Z' } } };
    spec.given([dated, overdue, moved]).when(mark('2026-01-05T08:30:00.000Z'), context()).then([{ type: 'TaskBecameOverdue', data: { id: ID, dueDate: '2026-01-05T08:30:00.000Z' } }]);
  });
});
