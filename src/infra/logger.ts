import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Authorization headers, passwords and tokens are redacted wherever they appear. */
export function createLogger(level: string): Logger {
  return pino({
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
  });
}
