import { statementName } from '../../infra/prepared.js';
import type pg from 'pg';
import { sqlLiteral } from '../../infra/simple-query.js';
import type { ReadAlong } from './read-along.js';

/** A read an append carries, as its transaction sends it: a statement prepared on the connection, executed with its values. */
export interface CarriedRead {
  read: ReadAlong;
  name: string;
  text: string;
  /** `execute <name>(<values>)`, written out before the append (a value that cannot be is no cost to it). */
  execute: string;
}

/** The server-side name of a carried text: `r_` and a hash of it. */
const nameOf = (text: string) => statementName(text, 'r');

/** The read `read` asks for with an append to `streamId`, or null (none, or one that cannot be written out: it must not cost the write). */
export function carriedRead(read: ReadAlong | undefined, streamId: string): CarriedRead | null {
  if (!read?.needs.length) return null;
  try {
    const statement = read.statementFor(streamId);
    if (!statement) return null;
    const name = nameOf(statement.text);
    const values = statement.values;
    return { read, name, text: statement.text, execute: `execute ${name}${values.length ? `(${values.map(sqlLiteral).join(', ')})` : ''}` };
  } catch {
    return null;
  }
}

/** Whether the append applied every projection the read's tables come from. */
export const answerable = (carried: CarriedRead, applied: readonly string[]) => carried.read.needs.every((name) => applied.includes(name));

/**
 * The carried texts prepared on each connection (PREPARE, not undone by a rollback). A
 * connection gets a text the first time a read carries it, before its transaction begins;
 * one the server refuses is not carried (the caller reads after the write instead).
 */
export class CarriedStatements {
  private readonly prepared = new WeakMap<pg.ClientBase, Set<string>>();

  async ready(connection: pg.ClientBase, reads: readonly CarriedRead[]): Promise<Set<CarriedRead>> {
    let known = this.prepared.get(connection);
    if (!known) this.prepared.set(connection, (known = new Set()));
    const ready = new Set<CarriedRead>();
    for (const read of reads) {
      if (!known.has(read.name)) {
        try {
          await connection.query(`prepare ${read.name} as ${read.text}`);
        } catch (error) {
          // Prepared already (by a process that lost track): usable; anything else: not carried.
          if ((error as { code?: string }).code !== '42P05') continue;
        }
        known.add(read.name);
      }
      ready.add(read);
    }
    return ready;
  }
}
