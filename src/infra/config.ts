import { z } from 'zod';

/** An unset or empty variable means "not configured". */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

/** `https://app.example.com` or `http://localhost:5173`: exactly what a browser sends as Origin. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    // No wildcards: each origin is named exactly (a `*` host would otherwise parse).
    const plainHost = /^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname);
    return (url.protocol === 'http:' || url.protocol === 'https:') && plainHost && url.origin === value;
  } catch {
    return false;
  }
}

const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

/** Every variable the service reads, with its default. docs/configuration.md lists the same table. */
export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: int(3000).pipe(z.number().max(65535)),
  HOST: z.string().default('0.0.0.0'),
  API_BASE_PATH: z
    .string()
    .default('/api')
    .refine((v) => v === '' || /^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/.test(v), 'must start with / and not end with /'),
  ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: optional(z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' })),
  DATABASE_POOL_MAX: int(20, 1),
  EMBEDDED_PG_DIR: z.string().default('./data/postgres'),
  EMBEDDED_PG_PORT: int(54329, 1).pipe(z.number().max(65535)),
  EVENTSTORE_URL: optional(z.string().regex(/^(esdb|kurrentdb|kdb)(\+discover)?:\/\//, 'must be an esdb:// connection string')),
  BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i, 'like 1mb or 512kb').default('1mb'),
  PROJECTION_BATCH_SIZE: int(1000, 1),
  PROJECTION_WAIT_MS: int(3000, 0),
  /** Pause of an asynchronous projection that no response reads after each page it wrote at the head of the log (bigger pages under load). */
  PROJECTION_LINGER_MS: int(10, 0),
  /** on: the projections responses read are applied inside each append (PostgreSQL log only); off: by their runners. */
  INLINE_PROJECTIONS: z.enum(['on', 'off']).default('on'),
  // Scale-out of projections and sagas over worker processes (src/infra/worker-group.ts, src/sagas/shards.ts).
  SAGA_SHARDS: int(8, 1).pipe(z.number().max(256)),
  WORKER_HEARTBEAT_MS: int(1000, 20),
  WORKER_TIMEOUT_MS: int(10000, 100),
  PROJECTION_RETRY_ATTEMPTS: int(5, 1),
  PROJECTION_RETRY_BACKOFF_MS: int(200, 0),
  // How long one delivery of a saga waits for a projection it reads; then it backs off and tries again, without counting a failure.
  SAGA_PROJECTION_WAIT_MS: int(10000, 10),
  // Events of different records each saga handles at once (those of one record always one after another).
  SAGA_CONCURRENCY: int(8, 1),
  SHUTDOWN_TIMEOUT_MS: int(10000, 0),
  JWT_SECRET: optional(z.string().min(32, 'must be at least 32 characters')),
  // Encryption at rest of the secrets the service must use again (src/infra/secret-box.ts); unset: stored as given.
  SECRETS_ENCRYPTION_KEY: optional(z.string().min(32, 'must be at least 32 characters')),
  // Keys used before (comma-separated): what they sealed still opens, and is sealed again under the current key at start.
  SECRETS_ENCRYPTION_KEY_PREVIOUS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((k) => k.trim()).filter((k) => k.length > 0))
    .pipe(z.array(z.string().min(32, 'each must be at least 32 characters'))),
  ACCESS_TOKEN_TTL_SECONDS: int(900, 30),
  REFRESH_TOKEN_TTL_DAYS: int(30, 1),
  RESET_TOKEN_TTL_MINUTES: int(60, 5),
  INVITATION_TTL_DAYS: int(7, 1),
  APP_URL: z.url().default('http://localhost:3000'),
  // Shown by web clients as their "Help & support" link (the login's appConfig.helpSupportUrl).
  HELP_SUPPORT_URL: optional(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })),
  SMTP_URL: optional(z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL' })),
  MAIL_FROM: z.string().default('CRM <no-reply@crm.local>'),
  // Outbound HTTP (workflow webhooks, the SMS provider): hosts exempt from the private-address refusal.
  OUTBOUND_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0)),
  // Browser clients on other origins (exact `scheme://host[:port]`, comma-separated); empty: same-origin only.
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((o) => o.trim()).filter((o) => o.length > 0))
    .pipe(z.array(z.string().refine(isOrigin, 'each must be an origin such as https://app.example.com (scheme, host, optional port; no path or trailing slash)'))),
  // Origins of browser clients that read the reference web client's response shapes (see src/http/response-shape.ts).
  REFERENCE_CLIENT_ORIGINS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((o) => o.trim()).filter((o) => o.length > 0))
    .pipe(z.array(z.string().refine(isOrigin, 'each must be an origin such as https://app.example.com (scheme, host, optional port; no path or trailing slash)'))),
  // Webhook deliveries (and their attempts) that ended longer ago than this are deleted hourly.
  WEBHOOK_DELIVERY_RETENTION_DAYS: int(30, 1),
  // First webhook attempts a worker process keeps queued in memory; past it they wait in the table and are fetched as room frees.
  WEBHOOK_QUEUE_MAX: int(1_000, 1),
  // Mail, texts and pushes that will never be sent again (sent, given up) are deleted hourly once this old.
  OUTBOX_RETENTION_DAYS: int(90, 2),
  SMS_PROVIDER_URL: optional(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })),
  SMS_PROVIDER_TOKEN: optional(z.string()),
  // Public form submissions (issue 16): per-IP limit, and the reCAPTCHA-compatible verifier forms with requireCaptcha use.
  FORM_SUBMIT_LIMIT_PER_IP: int(20, 1),
  SHARED_DASHBOARD_LIMIT_PER_IP: int(60, 1),
  FORM_SUBMIT_WINDOW_SECONDS: int(60, 1),
  CAPTCHA_VERIFY_URL: optional(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })),
  CAPTCHA_SECRET: optional(z.string()),
  CAPTCHA_MIN_SCORE: z.coerce.number().min(0).max(1).default(0.5),
  LOGIN_LIMIT_PER_ACCOUNT: int(10, 1),
  LOGIN_LIMIT_PER_IP: int(100, 1),
  RATE_LIMIT_WINDOW_SECONDS: int(900, 1),
  AUTH_CACHE_MS: int(5000, 0),
  TRUST_PROXY: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  HTTP_REQUEST_TIMEOUT_MS: int(30000, 1),
  HTTP_HEADERS_TIMEOUT_MS: int(15000, 1),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(5000, 1),
  LEAD_JOB_BATCH_SIZE: int(500, 1),
  LEAD_JOB_TIME_BUDGET_MS: int(45000, 1),
  // POST /lead-settings/scoring/rescore-all works this long in the request; the lead-rescore-all job does the rest.
  LEAD_RESCORE_REQUEST_BUDGET_MS: int(10000, 0),
  // Reports: each statement of an execution or export may run this long before it is cancelled (503).
  REPORT_STATEMENT_TIMEOUT_MS: int(15000, 1),
  // Uploads: stored under UPLOAD_DIR, or in an S3-compatible bucket when S3_BUCKET is set.
  UPLOAD_DIR: z.string().default('./data/uploads'),
  UPLOAD_MAX_BYTES: int(25 * 1024 * 1024, 1),
  IMAGE_MAX_BYTES: int(5 * 1024 * 1024, 1),
  S3_BUCKET: optional(z.string()),
  S3_ENDPOINT: optional(z.url()),
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY: optional(z.string()),
  S3_SECRET_KEY: optional(z.string()),
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  // GET /metrics: open (like /health) unless set, then only with `Authorization: Bearer <token>`.
  METRICS_TOKEN: optional(z.string().min(16, 'must be at least 16 characters')),
  EVENT_FEED_HEARTBEAT_MS: int(15000, 10),
}).superRefine((config, context) => {
  // An idle keep-alive connection is closed before a request on it could run into the headers timeout,
  // and the headers must arrive within the time the whole request has (Node refuses otherwise).
  if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS) {
    context.addIssue({ code: 'custom', path: ['HTTP_HEADERS_TIMEOUT_MS'], message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS' });
  }
  // A worker must have beaten a few times before the others count it as silent and end it.
  if (config.WORKER_TIMEOUT_MS < 3 * config.WORKER_HEARTBEAT_MS) {
    context.addIssue({ code: 'custom', path: ['WORKER_TIMEOUT_MS'], message: 'must be at least 3 times WORKER_HEARTBEAT_MS' });
  }
  if (config.HTTP_KEEP_ALIVE_TIMEOUT_MS >= config.HTTP_HEADERS_TIMEOUT_MS) {
    context.addIssue({ code: 'custom', path: ['HTTP_KEEP_ALIVE_TIMEOUT_MS'], message: 'must be less than HTTP_HEADERS_TIMEOUT_MS' });
  }
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
