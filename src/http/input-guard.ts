import type { RequestHandler } from 'express';
import { invalid } from '../domain/errors.js';
import type { ValidationIssue } from './validate.js';

/** Objects and arrays nested deeper than this are refused: no real body needs more, and recursive code must not overflow. */
const MAX_JSON_DEPTH = 32;

/** A high surrogate without a low one after it, or a low one without a high one before it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a text cannot be stored (PostgreSQL text and jsonb hold neither), or null. */
function textProblem(text: string): Omit<ValidationIssue, 'path'> | null {
  if (text.includes('\u0000')) return { message: 'Text must not contain NUL (\\u0000) characters', code: 'nul_character' };
  if (LONE_SURROGATE.test(text)) {
    return { message: 'Text must be valid Unicode: a lone UTF-16 surrogate (\\ud800-\\udfff without its pair) is not allowed', code: 'lone_surrogate' };
  }
  return null;
}

interface Problem extends Omit<ValidationIssue, 'path'> {
  /** Keys from the top down, filled in while the walk unwinds. */
  path: string[];
}

/**
 * The first thing in a parsed body or query that the service refuses to take in: nesting
 * deeper than MAX_JSON_DEPTH, a NUL or a lone surrogate in any string or key, or a
 * `__proto__` key (JSON.parse makes it an own property, which `Object.assign` and the
 * like would turn into a prototype). The walk never goes deeper than the limit.
 */
function problemIn(value: unknown, level: number): Problem | null {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem && { ...problem, path: [] };
  }
  if (value === null || typeof value !== 'object') return null;
  if (level > MAX_JSON_DEPTH) return { message: `JSON must not be nested more than ${MAX_JSON_DEPTH} levels deep`, code: 'too_deep', path: [] };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = problemIn(value[i], level + 1);
      if (problem) {
        problem.path.unshift(String(i));
        return problem;
      }
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const keyProblem = key === '__proto__' ? { message: 'The key __proto__ is not allowed', code: 'reserved_key' } : textProblem(key);
    const problem = keyProblem ? { ...keyProblem, path: [] } : problemIn((value as Record<string, unknown>)[key], level + 1);
    if (problem) {
      problem.path.unshift(key);
      return problem;
    }
  }
  return null;
}

/** The input problem as a validation issue (`path` as zod issues give it), or null when the value is fine. */
function inputProblem(value: unknown): ValidationIssue | null {
  const problem = problemIn(value, 1);
  return problem && { path: problem.path.join('.'), message: problem.message, code: problem.code };
}

/**
 * Refuses (400) a body or query that holds something no handler could store or walk safely,
 * before any handler runs: nothing is written for such a request.
 */
export const refuseUnsafeInput: RequestHandler = (req, _res, next) => {
  for (const [where, value] of [['request body', req.body], ['query', req.query]] as const) {
    const issue = inputProblem(value);
    if (issue) {
      next(invalid(`Invalid ${where}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}`, [issue]));
      return;
    }
  }
  next();
};
