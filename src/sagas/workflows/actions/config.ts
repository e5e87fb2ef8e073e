import type { z } from 'zod';
import { ActionFailed } from '../action.js';

/**
 * An action's stored config read with its schema; what does not fit fails the step with one
 * line naming each problem ("invalid webhook config: url is required").
 */
export function configOf<T extends z.ZodType>(schema: T, config: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(config ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => {
      const where = issue.path.join('.');
      // Our own messages already start with the field's name.
      return where && !issue.message.startsWith(where) ? `${where}: ${issue.message}` : issue.message;
    });
    throw new ActionFailed(`invalid ${what} config: ${issues.join('; ')}`);
  }
  return parsed.data;
}

/** A config value as template text: strings as they are, other values as JSON, nothing as "". */
export const textOf = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
