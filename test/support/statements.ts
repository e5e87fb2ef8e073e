import pg from 'pg';

/**
 * The statements this process sent to PostgreSQL while `work` ran, each as its text followed
 * by its values (JSON): to check how a request reads, e.g. that a detail went with its
 * write's commit rather than on its own.
 */
export async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const texts: string[] = [];
  const original = pg.Client.prototype.query;
  (pg.Client.prototype as any).query = function (this: unknown, config: any, ...rest: unknown[]) {
    texts.push(typeof config === 'string' ? config : `${config?.text ?? ''} ${JSON.stringify(config?.values ?? [])}`);
    return (original as any).call(this, config, ...rest);
  };
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return texts;
}

/** Of `texts`, the detail reads carried by a write (`execute r_…` before its commit) that name `id`. */
export const carriedReadsOf = (texts: string[], id: string) => texts.filter((text) => /execute r_/.test(text) && text.includes(id));
