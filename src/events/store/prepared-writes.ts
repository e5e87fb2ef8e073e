import { statementName } from '../../infra/prepared.js';
import type pg from 'pg';
import { escapeLiteral } from '../../infra/simple-query.js';

/**
 * One statement of the inline projections' writes for an append: SQL with its values written
 * in, or a statement whose only parameter is `$1`, JSON (the writer's rows), which the store
 * prepares once per connection and then executes with `json`.
 */
export type InlineStatement = { sql: string } | { prepared: string; json: string };

/** The server-side name of a prepared write: `w_` and a hash of its text. */
const nameOf = (text: string) => statementName(text, 'w');

/**
 * The inline writes as one text for the append's second round trip. A write's plan is kept on
 * the connection: its text is prepared the first time the connection sends it (`prepare`
 * in the same text, before its `execute`) and executed by name from then on, so PostgreSQL
 * neither parses nor plans the long insert of a record's row on every append. A PREPARE is
 * not undone by a rollback: after a transaction that failed, `resync` asks the server which
 * writes the connection holds.
 */
export class PreparedWrites {
  private readonly known = new WeakMap<pg.ClientBase, Set<string>>();

  /** The text, and the names it prepares (to note as held once its transaction commits). */
  textFor(connection: pg.ClientBase, statements: readonly InlineStatement[]): { text: string; preparing: string[] } {
    const held = this.known.get(connection);
    const preparing: string[] = [];
    const parts = statements.map((statement) => {
      if ('sql' in statement) return statement.sql;
      const name = nameOf(statement.prepared);
      const execute = `execute ${name}(${escapeLiteral(statement.json)})`;
      if (held?.has(name) || preparing.includes(name)) return execute;
      preparing.push(name);
      return `prepare ${name}(json) as ${statement.prepared};\n${execute}`;
    });
    return { text: parts.join(';\n'), preparing };
  }

  /** The transaction that prepared them committed. */
  held(connection: pg.ClientBase, names: readonly string[]): void {
    if (!names.length) return;
    let held = this.known.get(connection);
    if (!held) this.known.set(connection, (held = new Set()));
    // As many as the projections have statement shapes (tables by the columns written), kept as long as the connection.
    for (const name of names) held.add(name);
  }

  /** After a failed transaction (rolled back, connection healthy): the prepared writes it holds, as the server says. */
  async resync(connection: pg.ClientBase): Promise<void> {
    const { rows } = await connection.query<{ name: string }>(`select name from pg_prepared_statements where name like 'w\\_%'`);
    this.known.set(connection, new Set(rows.map((r) => r.name)));
  }
}
