/** Polls until `condition` holds; fails the test after `ms`. */
export async function until(condition: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls `read` until it gives a value (not null, undefined or false) and answers it; fails the test after `ms`. */
export async function eventually<T>(read: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms = 10_000): Promise<T> {
  let value: T | null | undefined | false = null;
  await until(async () => {
    value = await read();
    return value !== null && value !== undefined && value !== false;
  }, ms);
  return value as T;
}
