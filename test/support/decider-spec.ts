import { expect } from 'chai';
import type { Aggregate, DomainEvent } from '../../src/commands/aggregate.js';
import { DomainError, type DomainErrorKind } from '../../src/domain/errors.js';

/**
 * Decider specifications: `given(events).when(command[, context]).then(events | refused(kind))`.
 *
 *   const spec = deciderSpec(leadAggregate);
 *   spec.given([created]).when({ kind: 'delete', id }, context).then([{ type: 'LeadDeleted', data: { id } }]);
 *   spec.given([]).when({ kind: 'delete', id }, context).then(refused('not_found'));
 *
 * `given` folds the events through `evolve` (no database); `when` decides once. Besides
 * `then`, a decision offers its `events` (to build the next `given`) and the `state` they
 * fold to, for rules that are easier to state on the result.
 */

/** A decision the decider must refuse with a DomainError of this kind (and a message matching `message`). */
export interface Refusal {
  refused: DomainErrorKind;
  message?: RegExp;
}
export const refused = (kind: DomainErrorKind, message?: RegExp): Refusal => ({ refused: kind, message });

type ContextArgs<Context> = [Context] extends [void] ? [] : [context: Context];

export interface Decision<State, Event> {
  /** The decided events equal these, exactly and in order. */
  then(expected: readonly Event[]): void;
  /** The decider refuses; returns the error for further checks (details, body). */
  then(expected: Refusal): DomainError;
  /** The decided events (fails the test when the command is refused). */
  readonly events: Event[];
  /** The given state with the decided events folded in. */
  readonly state: State;
}

export interface Given<State, Event, Command, Context> {
  /** The state the given events fold to. */
  readonly state: State;
  when(command: Command, ...context: ContextArgs<Context>): Decision<State, Event>;
}

function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'refused' in value;
}

export function deciderSpec<State, Event extends DomainEvent, Command, Context = void>(aggregate: Aggregate<State, Event, Command, Context>) {
  const fold = (events: readonly Event[], from: State) => events.reduce(aggregate.evolve, from);
  return {
    given(events: readonly Event[] = []): Given<State, Event, Command, Context> {
      const state = fold(events, aggregate.initialState);
      return {
        state,
        when(command: Command, ...[context]: ContextArgs<Context>): Decision<State, Event> {
          const run = () => aggregate.decide(command, state, context as Context);
          function then(expected: readonly Event[]): void;
          function then(expected: Refusal): DomainError;
          function then(expected: readonly Event[] | Refusal): DomainError | void {
            if (!isRefusal(expected)) {
              expect(run()).to.deep.equal(expected);
              return;
            }
            let outcome: unknown;
            try {
              outcome = run();
            } catch (error) {
              if (!(error instanceof DomainError)) throw error;
              expect(error.kind, `refused as ${expected.refused}: ${error.message}`).to.equal(expected.refused);
              if (expected.message) expect(error.message).to.match(expected.message);
              return error;
            }
            expect.fail(`expected the command to be refused (${expected.refused}); it decided ${JSON.stringify(outcome)}`);
          }
          return {
            then,
            get events() {
              return run();
            },
            get state() {
              return fold(run(), state);
            },
          };
        },
      };
    },
  };
}
