import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout, written asynchronously (a synchronous
 * write per request line cost ~15% of a request). Authorization headers, passwords and
 * tokens are redacted wherever they appear. Call `flushLogs` before the process exits.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 1, sync: false });
  const logger = pino({
    level,
    base: undefined,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.password',
        '*.currentPassword',
        '*.newPassword',
        '*.token',
        '*.accessToken',
        '*.refreshToken',
        '*.passwordHash',
      ],
      censor: '[redacted]',
    },
  }, destination);
  destinations.set(logger, destination);
  return logger;
}

const destinations = new WeakMap<Logger, ReturnType<typeof pino.destination>>();

/** Writes out what is buffered; for the moments before `process.exit`. */
export function flushLogs(logger: Logger): void {
  try {
    destinations.get(logger)?.flushSync();
  } catch {
    // Nothing buffered, or stdout already gone: nothing more to do.
  }
}
