/** An event as a decider emits it and a fold reads it: its type and its plain-JSON data. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

/**
 * How one kind of stream folds into a state: what history, a command handler and a
 * decider's tests all need from an aggregate, without its commands.
 */
export interface EventFold<State, Event> {
  /** Streams are `<streamPrefix>-<id>`. */
  streamPrefix: string;
  initialState: State;
  evolve(state: State, event: Event): State;
}
