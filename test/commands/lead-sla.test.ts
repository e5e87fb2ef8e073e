import { expect } from 'chai';
import type { LeadEvent } from '../../src/events/leads.js';
import { slaOf, withSettings } from '../support/lead-settings.js';
import {
  CONTACTED,
  DISQUALIFIED,
  DUE,
  LEAD,
  NEW,
  NO_BUDGET,
  QUALIFIED,
  after,
  at,
  changeStage,
  checkSla,
  created,
  ctx,
  disqualify,
  leadOf,
  note,
  quiet,
  settings,
  spec,
  stageMoved,
  update,
} from '../support/lead-decider.js';

// Leads created under `settings` (SLA on) on Monday 09:00 are due at 13:00 (4 working hours).
const running = created(settings);
const firstResponse = (iso: string, late: boolean): LeadEvent => ({ type: 'LeadFirstResponseRecorded', data: { id: LEAD, at: iso, late } });

describe('lead decider: the first response', () => {
  it('is recorded on the first stage change while the SLA runs', () => {
    spec
      .given(running)
      .when(changeStage(CONTACTED), ctx(settings, at('2026-01-05T10:00:00')))
      .then([stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']), firstResponse('2026-01-05T10:00:00.000Z', false)]);
  });

  it('is late after the due time', () => {
    spec
      .given(running)
      .when(changeStage(CONTACTED), ctx(settings, at('2026-01-05T14:00:00')))
      .then([stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']), firstResponse('2026-01-05T14:00:00.000Z', true)]);
  });

  it('a stage move through an update is a first response too', () => {
    spec
      .given(running)
      .when(update({ stageId: CONTACTED }), ctx(settings, at('2026-01-05T10:00:00')))
      .then([stageMoved([NEW, 'New'], [CONTACTED, 'Contacted']), firstResponse('2026-01-05T10:00:00.000Z', false)]);
  });

  it('is recorded only once', () => {
    const answered = after(running, changeStage(CONTACTED), ctx(settings));
    expect(leadOf(answered).firstResponseAt).to.equal('2026-01-05T10:00:00.000Z');
    spec.given(answered).when(changeStage(QUALIFIED), ctx(settings, at('2026-01-05T11:00:00'))).then([stageMoved([CONTACTED, 'Contacted'], [QUALIFIED, 'Qualified'])]);
  });

  it('is not recorded for a lead without an SLA', () => {
    spec.given(created(quiet)).when(changeStage(CONTACTED), ctx(settings)).then([stageMoved([NEW, 'New'], [CONTACTED, 'Contacted'])]);
  });

  it('a disqualification counts as the first response while the SLA runs', () => {
    expect(spec.given(running).when(disqualify('No Budget'), ctx(settings)).events[1]).to.deep.equal(firstResponse('2026-01-05T10:00:00.000Z', false));
  });

  describe('notes', () => {
    const noteAdded: LeadEvent = { type: 'NoteAdded', data: { recordId: LEAD, noteId: 'note-1', content: 'Called, left a message' } };

    it('adds a note with NoteAdded', () => {
      spec.given(created()).when(note(), ctx()).then([noteAdded]);
    });

    it('the first note records the first response, on time before the due time', () => {
      spec.given(running).when(note(), ctx(settings, at('2026-01-05T12:00:00'))).then([noteAdded, firstResponse('2026-01-05T12:00:00.000Z', false)]);
    });

    it('the first note after the due time is a late first response', () => {
      spec.given(running).when(note(), ctx(settings, at('2026-01-05T13:00:01'))).then([noteAdded, firstResponse('2026-01-05T13:00:01.000Z', true)]);
    });

    it('once the SLA is breached the first response is late, whatever its time', () => {
      const breached = after(running, checkSla, ctx(settings, at('2026-01-05T14:00:00')));
      spec.given(breached).when(note(), ctx(settings, at('2026-01-05T12:30:00'))).then([noteAdded, firstResponse('2026-01-05T12:30:00.000Z', true)]);
    });

    it('a second note records no second first response', () => {
      const answered = after(running, note(), ctx(settings, at('2026-01-05T12:00:00')));
      spec.given(answered).when(note(), ctx(settings, at('2026-01-05T12:10:00'))).then([noteAdded]);
    });

    it('a note on a lead without an SLA records nothing more', () => {
      spec.given(created(quiet)).when(note(), ctx(settings, at('2026-01-05T12:00:00'))).then([noteAdded]);
    });
  });
});

describe('lead decider: check-sla', () => {
  const breach = (nowIso: string, dueAt = DUE): LeadEvent => ({ type: 'LeadSlaBreached', data: { id: LEAD, at: nowIso, dueAt } });
  const escalation = (nowIso: string): LeadEvent => ({ type: 'LeadSlaEscalated', data: { id: LEAD, at: nowIso } });
  const checkedAt = (iso: string, s = settings) => ctx(s, at(iso));

  it('does nothing before the due time, nor at it', () => {
    spec.given(running).when(checkSla, checkedAt('2026-01-05T12:59:00')).then([]);
    spec.given(running).when(checkSla, checkedAt('2026-01-05T13:00:00')).then([]);
  });

  it('marks the SLA breached once the due time has passed', () => {
    spec.given(running).when(checkSla, checkedAt('2026-01-05T13:30:00')).then([breach('2026-01-05T13:30:00.000Z')]);
  });

  it('breaches only once: deciding again on the folded state gives nothing', () => {
    const breached = after(running, checkSla, checkedAt('2026-01-05T13:30:00'));
    expect(leadOf(breached).slaBreachedAt).to.equal('2026-01-05T13:30:00.000Z');
    spec.given(breached).when(checkSla, checkedAt('2026-01-05T13:30:00')).then([]);
    spec.given(breached).when(checkSla, checkedAt('2026-01-05T16:59:00')).then([]);
  });

  it('escalates once (escalationHours − firstContactHours) = 4 working hours have passed since the due time', () => {
    const breached = after(running, checkSla, checkedAt('2026-01-05T13:30:00'));
    spec.given(breached).when(checkSla, checkedAt('2026-01-05T17:00:00')).then([escalation('2026-01-05T17:00:00.000Z')]);
  });

  it('escalates only once', () => {
    const escalated = after(after(running, checkSla, checkedAt('2026-01-05T13:30:00')), checkSla, checkedAt('2026-01-05T17:00:00'));
    expect(leadOf(escalated).slaEscalatedAt).to.equal('2026-01-05T17:00:00.000Z');
    spec.given(escalated).when(checkSla, checkedAt('2026-01-06T17:00:00')).then([]);
  });

  it('breaches and escalates in one decision when first checked after the escalation time', () => {
    // Mon 13:00 → Tue 10:00 is 5 + 1 = 6 working hours
    spec.given(running).when(checkSla, checkedAt('2026-01-06T10:00:00')).then([breach('2026-01-06T10:00:00.000Z'), escalation('2026-01-06T10:00:00.000Z')]);
  });

  it('counts the escalation window in working hours, not wall-clock hours', () => {
    // Created Mon 14:00 → due Mon 18:00; 4 working hours later is Tue 13:00.
    const late = after(created(settings, {}, at('2026-01-05T14:00:00')), checkSla, checkedAt('2026-01-05T18:30:00'));
    expect(leadOf(late)).to.include({ slaDueAt: '2026-01-05T18:00:00.000Z', slaBreachedAt: '2026-01-05T18:30:00.000Z' });
    spec.given(late).when(checkSla, checkedAt('2026-01-06T12:59:00')).then([]);
    spec.given(late).when(checkSla, checkedAt('2026-01-06T13:00:00')).then([escalation('2026-01-06T13:00:00.000Z')]);
  });

  it('does nothing for a lead that has had its first response', () => {
    const answered = after(running, note(), checkedAt('2026-01-05T12:00:00'));
    spec.given(answered).when(checkSla, checkedAt('2026-01-06T10:00:00')).then([]);
  });

  it('does nothing for a disqualified lead', () => {
    const disqualified: LeadEvent[] = [
      ...running,
      { type: 'LeadDisqualified', data: { id: LEAD, reasonId: NO_BUDGET, reason: 'No Budget', notes: null, fromStageId: NEW, fromStageName: 'New', toStageId: DISQUALIFIED, toStageName: 'Disqualified' } },
    ];
    expect(leadOf(disqualified)).to.include({ status: 'disqualified', firstResponseAt: null });
    spec.given(disqualified).when(checkSla, checkedAt('2026-01-06T10:00:00')).then([]);
  });

  it('does nothing for a lead without an SLA', () => {
    spec.given(created(quiet)).when(checkSla, checkedAt('2026-01-06T10:00:00')).then([]);
  });

  it('with escalation disabled (the tenant’s policy in the context), only breaches', () => {
    const noEscalation = withSettings(settings, { type: 'LeadSettingChanged', data: { key: 'sla', value: slaOf({ escalationEnabled: false }) } });
    spec.given(running).when(checkSla, checkedAt('2026-01-07T10:00:00', noEscalation)).then([breach('2026-01-07T10:00:00.000Z')]);
  });
});
