import { expect } from 'chai';
import { taskSettingsAggregate, type TaskSettingsCommand } from '../../src/commands/task-settings/task-settings.js';
import { taskSettingsSeed } from '../../src/commands/task-settings/task-settings-seed.js';
import { completedStatusId, defaultPriorityId, defaultStatusId, defaultTypeId, reopenStatusId, taskSettingOf, type TaskSettingsState } from '../../src/domain/task-settings.js';
import type { TaskSettingsEvent } from '../../src/events/task-settings.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const spec = deciderSpec(taskSettingsAggregate);
let counter = 0;
const seeded = taskSettingsSeed(() => `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`);
const state = spec.given(seeded).state;
/** The id of the seeded item of a lookup with that name. */
const idOf = (lookup: 'types' | 'statuses' | 'priorities', name: string, from: TaskSettingsState = state) =>
  Object.entries(from[lookup]).find(([, item]) => item.name === name)![0];
const after = (history: TaskSettingsEvent[], ...commands: TaskSettingsCommand[]): TaskSettingsEvent[] =>
  commands.reduce((events, command) => [...events, ...spec.given(events).when(command).events], history);

describe('task settings decider', () => {
  describe('seed', () => {
    it('gives a new tenant 8 types, 6 statuses, 4 priorities and the 4 keyed settings; the selectors find the defaults', () => {
      expect(Object.keys(state.types)).to.have.length(8);
      expect(Object.keys(state.statuses)).to.have.length(6);
      expect(Object.keys(state.priorities)).to.have.length(4);
      expect(Object.keys(state.settings)).to.have.members(['general', 'reminders', 'recurring', 'kanban']);
      expect(defaultStatusId(state)).to.equal(idOf('statuses', 'Not Started'));
      expect(reopenStatusId(state)).to.equal(idOf('statuses', 'Not Started'));
      expect(completedStatusId(state)).to.equal(idOf('statuses', 'Completed'));
      expect(defaultPriorityId(state)).to.equal(idOf('priorities', 'Medium'));
      expect(defaultTypeId(state)).to.equal(idOf('types', 'To-Do'));
      expect(state.statuses[idOf('statuses', 'Cancelled')]).to.include({ isOpen: false, isCompleted: false });
    });

    it('is idempotent: a seeded stream is not seeded again', () => {
      spec.given(seeded).when({ kind: 'seed', events: seeded }).then([]);
      expect(spec.given([]).when({ kind: 'seed', events: seeded }).events).to.deep.equal(seeded);
    });
  });

  describe('create', () => {
    it('fills defaults, a slug from the name and the next position', () => {
      spec.given(seeded).when({ kind: 'create', lookup: 'priorities', id: 'p1', fields: { name: 'Some Day', level: 0 } }).then([
        {
          type: 'TaskPriorityCreated',
          data: { id: 'p1', color: '#6B7280', icon: 'minus', level: 0, isDefault: false, isActive: true, isSystem: false, name: 'Some Day', slug: 'some_day', position: 5 },
        },
      ]);
    });

    it('refuses a name (or slug) already used in the same lookup (conflict), not in another', () => {
      spec.given(seeded).when({ kind: 'create', lookup: 'types', id: 't1', fields: { name: ' call ' } }).then(refused('conflict', /already exists/));
      expect(spec.given(seeded).when({ kind: 'create', lookup: 'statuses', id: 's1', fields: { name: 'Call' } }).events).to.have.length(1);
    });

    it('a new default or completed status takes the flag from the one holding it; completed implies not open', () => {
      spec.given(seeded).when({ kind: 'create', lookup: 'statuses', id: 's1', fields: { name: 'Done', isCompleted: true } }).then([
        {
          type: 'TaskStatusCreated',
          data: { id: 's1', color: '#6B7280', icon: null, isDefault: false, isOpen: false, isCompleted: true, isActive: true, isSystem: false, name: 'Done', slug: 'done', position: 7 },
        },
        { type: 'TaskStatusUpdated', data: { id: idOf('statuses', 'Completed'), changes: { isCompleted: false } } },
      ]);
      const events = spec.given(seeded).when({ kind: 'create', lookup: 'statuses', id: 's2', fields: { name: 'Triage', isDefault: true } }).events;
      expect(events[1]).to.deep.equal({ type: 'TaskStatusUpdated', data: { id: idOf('statuses', 'Not Started'), changes: { isDefault: false } } });
    });

    it('refuses unsound status flags (invalid)', () => {
      spec.given(seeded).when({ kind: 'create', lookup: 'statuses', id: 's1', fields: { name: 'X', isOpen: true, isCompleted: true } }).then(refused('invalid'));
      spec.given(seeded).when({ kind: 'create', lookup: 'statuses', id: 's1', fields: { name: 'X', isDefault: true, isOpen: false } }).then(refused('invalid', /open/));
      spec.given(seeded).when({ kind: 'create', lookup: 'priorities', id: 'p1', fields: { name: 'X', isDefault: true, isActive: false } }).then(refused('invalid', /active/));
    });
  });

  describe('update', () => {
    it('records only what changes; nothing for no change; not found for an unknown id', () => {
      const call = idOf('types', 'Call');
      spec.given(seeded).when({ kind: 'update', lookup: 'types', id: call, changes: { color: '#10B981' } }).then([]);
      spec.given(seeded).when({ kind: 'update', lookup: 'types', id: call, changes: { name: 'Phone' } }).then([
        { type: 'TaskTypeUpdated', data: { id: call, changes: { name: 'Phone', slug: 'phone' } } },
      ]);
      spec.given(seeded).when({ kind: 'update', lookup: 'types', id: 'nope', changes: { name: 'x' } }).then(refused('not_found'));
    });

    it('moves the default priority; the holder of a flag cannot drop it or be deactivated', () => {
      const [high, medium] = [idOf('priorities', 'High'), idOf('priorities', 'Medium')];
      spec.given(seeded).when({ kind: 'update', lookup: 'priorities', id: high, changes: { isDefault: true } }).then([
        { type: 'TaskPriorityUpdated', data: { id: high, changes: { isDefault: true } } },
        { type: 'TaskPriorityUpdated', data: { id: medium, changes: { isDefault: false } } },
      ]);
      spec.given(seeded).when({ kind: 'update', lookup: 'priorities', id: medium, changes: { isDefault: false } }).then(refused('invalid', /default/));
      spec.given(seeded).when({ kind: 'update', lookup: 'statuses', id: idOf('statuses', 'Completed'), changes: { isCompleted: false } }).then(refused('invalid', /completed/));
      spec.given(seeded).when({ kind: 'update', lookup: 'statuses', id: idOf('statuses', 'Not Started'), changes: { isActive: false } }).then(refused('invalid', /active/));
    });

    it('marking a status completed closes it and takes the flag from the completed one', () => {
      const waiting = idOf('statuses', 'Waiting');
      const decided = spec.given(seeded).when({ kind: 'update', lookup: 'statuses', id: waiting, changes: { isCompleted: true } });
      expect(decided.events[0]).to.deep.equal({ type: 'TaskStatusUpdated', data: { id: waiting, changes: { isCompleted: true, isOpen: false } } });
      expect(completedStatusId(decided.state)).to.equal(waiting);
    });
  });

  describe('delete', () => {
    const history = after(seeded, { kind: 'create', lookup: 'statuses', id: 's1', fields: { name: 'Parked' } });

    it('deletes an unused, non-system item', () => {
      spec.given(history).when({ kind: 'delete', lookup: 'statuses', id: 's1', inUse: 0 }).then([{ type: 'TaskStatusDeleted', data: { id: 's1' } }]);
    });

    it('refuses system rows, flag holders and items tasks use', () => {
      spec.given(history).when({ kind: 'delete', lookup: 'types', id: idOf('types', 'Demo'), inUse: 0 }).then(refused('invalid', /System/));
      spec.given(history).when({ kind: 'delete', lookup: 'statuses', id: 's1', inUse: 3 }).then(refused('invalid', /^Cannot delete — 3 task\(s\) use this status$/));
      const flagged = after(history, { kind: 'update', lookup: 'statuses', id: 's1', changes: { isDefault: true } });
      spec.given(flagged).when({ kind: 'delete', lookup: 'statuses', id: 's1', inUse: 0 }).then(refused('invalid', /default/));
      spec.given(history).when({ kind: 'delete', lookup: 'statuses', id: 'nope', inUse: 0 }).then(refused('not_found'));
    });
  });

  describe('reorder', () => {
    const ids = Object.entries(state.priorities).sort(([, a], [, b]) => a.position - b.position).map(([id]) => id);

    it('numbers the items 1..n, recording only positions that change', () => {
      const swapped = [ids[1], ids[0], ids[2], ids[3]];
      spec.given(seeded).when({ kind: 'reorder', lookup: 'priorities', ids: swapped }).then([
        { type: 'TaskPriorityUpdated', data: { id: ids[1], changes: { position: 1 } } },
        { type: 'TaskPriorityUpdated', data: { id: ids[0], changes: { position: 2 } } },
      ]);
    });

    it('needs every live item exactly once', () => {
      for (const list of [ids.slice(1), [...ids, ids[0]], [...ids.slice(1), 'other'], [...ids, 'other']]) {
        spec.given(seeded).when({ kind: 'reorder', lookup: 'priorities', ids: list }).then(refused('invalid'));
      }
    });
  });

  describe('change-setting', () => {
    it('merges the part given over the current value; nothing when it changes nothing', () => {
      const decided = spec.given(seeded).when({ kind: 'change-setting', key: 'reminders', value: { enabled: false } });
      expect(taskSettingOf(decided.state, 'reminders')).to.deep.equal({ enabled: false, defaultReminderMinutes: 30, options: [5, 10, 15, 30, 60, 120, 1440] });
      spec.given(seeded).when({ kind: 'change-setting', key: 'reminders', value: { enabled: true } }).then([]);
    });

    it('keeps general pointing at live lookups by slug', () => {
      spec.given(seeded).when({ kind: 'change-setting', key: 'general', value: { defaultPriority: 'nope' } }).then(refused('invalid', /defaultPriority/));
      expect(spec.given(seeded).when({ kind: 'change-setting', key: 'general', value: { defaultPriority: 'high' } }).events).to.have.length(1);
    });
  });
});
