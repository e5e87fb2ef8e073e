import { setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { RequestHandler, Router } from 'express';
import type { IdentityDeps } from './commands/identity/identity-deps.js';
import { notYetReadable, type CreatedRecord } from './domain/errors.js';
import { Mailer } from './infra/mailer.js';
import { SecretBox, sealStoredSecrets } from './infra/secret-box.js';
import { TextMessenger } from './infra/text-messages.js';
import { RateLimiter } from './infra/rate-limit.js';
import { AccessTokens, signingSecret } from './commands/identity/tokens.js';
import { openEventStore } from './events/store/index.js';
import type { EventStore, Position } from './events/store/types.js';
import type { ReadAlong } from './events/store/read-along.js';
import { createHttpApp } from './http/app.js';
import { apiDocsRouter } from './http/openapi/index.js';
import { authenticate } from './http/authenticate.js';
import { idempotentPosts } from './http/idempotency.js';
import { httpServerOptions } from './http/server-options.js';
import { AdvisoryLocks } from './infra/advisory-locks.js';
import { WorkerGroup } from './infra/worker-group.js';
import { closeLockConnection, shareLockConnection } from './infra/key-locks.js';
import { systemClock, type Clock } from './infra/clock.js';
import type { Config } from './infra/config.js';
import {
  connectDatabase,
  createDatabaseIfMissing,
  startEmbeddedPostgres,
  withDatabase,
  type Database,
  type EmbeddedServer,
} from './infra/database.js';
import { createLogger, type Logger } from './infra/logger.js';
import type { RetryPolicy } from './events/subscriptions/parked-events.js';
import { ProjectionEngine } from './projections/engine.js';
import { migrateToLatest } from './projections/migrations/index.js';
import type { Projection } from './projections/projection.js';
import { checkHealth } from './queries/health.js';
import { loadPrincipal } from './queries/principal.js';
import type { Saga } from './sagas/saga.js';
import { SagaEngine } from './sagas/engine.js';
import { completePendingPlans } from './commands/write-plan.js';
import { allJobs, allMigrations, allProjections, allSagas, allUpgradeSeeds, inlineProjectionCandidates, modules, type ModuleManifest } from './modules.js';
import { Scheduler } from './jobs/scheduler.js';

/** Everything a module needs, built once at start-up and handed down. */
export interface Services extends IdentityDeps {
  config: Config;
  logger: Logger;
  clock: Clock;
  db: Database;
  store: EventStore;
  projections: ProjectionEngine;
  /** The process's session-level advisory locks, all on one dedicated connection (runners, scheduled jobs). */
  locks: AdvisoryLocks;
  /**
   * Read-your-writes: resolves once the projections have passed a command's position (in a
   * module's routes: the projections that module's responses read); after
   * PROJECTION_WAIT_MS it throws `notYetReadable(created)`, answered 202.
   */
  waitForProjections(position: Position | null, created?: CreatedRecord): Promise<void>;
  /**
   * Whether the read models a module's responses read are written in each append's own
   * transaction (inline projections): one statement then sees a record as of its stream's
   * revision, with no wait. False outside a module's routes.
   */
  readsWrittenWithAppends(): boolean;
  /**
   * A read for a command's append to carry in its transaction (src/events/store/read-along.ts),
   * answered only when the projections the module's responses read were applied with the
   * append; undefined outside a module's routes.
   */
  readAlong(statementFor: ReadAlong['statementFor']): ReadAlong | undefined;
  /** Bearer-token authentication with one principal cache for every route. */
  authenticate: RequestHandler;
  /** SMS and chat-app messages (outbox, provider). */
  textMessages: TextMessenger;
  /** Seals and opens the secrets stored for reuse (SECRETS_ENCRYPTION_KEY). */
  secretBox: SecretBox;
  /** Aborted as the service starts to stop: long-lived responses (change feed streams) end then, not at the shutdown timeout. */
  stopping: AbortSignal;
}

export interface RunningService {
  services: Services;
  server: Server | null;
  /** Port the HTTP server listens on (useful with PORT=0). */
  port: number;
  stop(): Promise<void>;
}

export interface ServiceOverrides {
  logger?: Logger;
  clock?: Clock;
  projections?: Projection[];
  sagas?: Saga[];
  sagaRetry?: RetryPolicy;
  /** Extra routes under the base path (tests mount probes of the machinery here). */
  mountApi?: (router: Router, services: Services) => void;
  /** False: scheduled jobs do not run on their own (tests on a manual clock tick them). */
  schedule?: boolean;
}

const EMBEDDED_DATABASE = 'crm';

async function openDatabase(config: Config, logger: Logger): Promise<{ url: string; embedded: EmbeddedServer | null }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: null };
  logger.info({ dir: config.EMBEDDED_PG_DIR, port: config.EMBEDDED_PG_PORT }, 'starting embedded PostgreSQL');
  const embedded = await startEmbeddedPostgres({ dir: config.EMBEDDED_PG_DIR, port: config.EMBEDDED_PG_PORT, logger });
  try {
    await createDatabaseIfMissing(embedded.adminUrl, EMBEDDED_DATABASE);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  return { url: withDatabase(embedded.adminUrl, EMBEDDED_DATABASE), embedded };
}

/**
 * Starts the service for its ROLE: `api` serves HTTP, `worker` runs projections and
 * sagas (and /health), `all` does both. Returns a handle whose `stop` shuts down in
 * order: stop intake, finish in-flight requests, stop runners, close connections.
 */
export async function startService(config: Config, overrides: ServiceOverrides = {}): Promise<RunningService> {
  const logger = overrides.logger ?? createLogger(config.LOG_LEVEL);
  const clock = overrides.clock ?? systemClock;
  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanUp = async () => {
    for (const fn of cleanups.reverse()) await fn().catch((error) => logger.error({ err: error }, 'shutdown step failed'));
    cleanups.length = 0;
  };

  try {
    const { url, embedded } = await openDatabase(config, logger);
    if (embedded) cleanups.push(() => embedded.stop());
    const db = connectDatabase(url, config.DATABASE_POOL_MAX);
    cleanups.push(() => db.close());
    await migrateToLatest(db.knex, allMigrations());
    const secretBox = new SecretBox(config.SECRETS_ENCRYPTION_KEY, config.SECRETS_ENCRYPTION_KEY_PREVIOUS);
    // Before anything reads a secret: refuses to start when one is sealed under a key not given.
    const resealed = await sealStoredSecrets(db.knex, secretBox);
    if (resealed > 0) logger.info({ resealed }, 'stored secrets brought to the current SECRETS_ENCRYPTION_KEY');
    if (!secretBox.encrypting && config.NODE_ENV === 'production') {
      logger.warn('SECRETS_ENCRYPTION_KEY is not set: webhook secrets, workflow credentials and push keys are stored unencrypted');
    }

    const store = await openEventStore({ eventStoreUrl: config.EVENTSTORE_URL, pool: db.pool, logger });
    cleanups.push(() => store.close());
    const locks = new AdvisoryLocks(url, logger);
    cleanups.push(() => locks.close());
    shareLockConnection(db.knex, locks);
    cleanups.push(() => closeLockConnection(db.knex));

    const runsWorkers = config.ROLE !== 'api';
    // This process's share of the projections and sagas, beside the other worker processes.
    const workers = new WorkerGroup({ knex: db.knex, locks, logger, heartbeatMs: config.WORKER_HEARTBEAT_MS, timeoutMs: config.WORKER_TIMEOUT_MS });
    cleanups.push(() => workers.close());
    const retry = { attempts: config.PROJECTION_RETRY_ATTEMPTS, initialBackoffMs: config.PROJECTION_RETRY_BACKOFF_MS };
    const readByResponses = inlineProjectionCandidates();
    const projections = new ProjectionEngine(
      {
        store,
        knex: db.knex,
        pool: db.pool,
        locks,
        url,
        logger,
        batchSize: config.PROJECTION_BATCH_SIZE,
        lockRetryMs: config.WORKER_HEARTBEAT_MS,
        workers,
        retry,
        inline: config.INLINE_PROJECTIONS === 'on' ? readByResponses : [],
        // Whatever the log, no response waits for the others (analytics): their runners may gather events into bigger pages.
        linger: { names: allProjections().map((p) => p.name).filter((name) => !readByResponses.includes(name)), ms: config.PROJECTION_LINGER_MS },
      },
      overrides.projections ?? allProjections(),
    );
    await projections.start({ run: runsWorkers });
    cleanups.push(() => projections.close());
    const mailer = new Mailer({ knex: db.knex, smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, logger, clock });
    cleanups.push(() => mailer.close());
    const textMessages = TextMessenger.fromConfig(db.knex, config, { logger, clock });
    if (runsWorkers) {
      const sagas = new SagaEngine(
        {
          store,
          knex: db.knex,
          locks,
          logger,
          clock,
          mailer,
          textMessages,
          secretBox,
          config,
          // Sagas wait for projections as HTTP responses do: woken by their progress, no polling.
          progress: projections.progress,
          batchSize: config.PROJECTION_BATCH_SIZE,
          lockRetryMs: config.WORKER_HEARTBEAT_MS,
          workers,
          shards: config.SAGA_SHARDS,
          retry: overrides.sagaRetry ?? retry,
        },
        overrides.sagas ?? allSagas(),
      );
      sagas.start();
      cleanups.push(() => sagas.close());
    }

    const stopping = new AbortController();
    setMaxListeners(0, stopping.signal); // one listener per open feed stream
    const services: Services = {
      stopping: stopping.signal,
      config,
      logger,
      clock,
      db,
      knex: db.knex,
      store,
      projections,
      locks,
      accessTokens: new AccessTokens(await signingSecret(db.knex, config.JWT_SECRET), config.ACCESS_TOKEN_TTL_SECONDS),
      mailer,
      textMessages,
      secretBox,
      rateLimiter: new RateLimiter(db.knex, clock),
      waitForProjections: waitingFor(projections, config.PROJECTION_WAIT_MS),
      readsWrittenWithAppends: () => false,
      readAlong: () => undefined,
      authenticate: (_req, _res, next) => next(),
      loadPrincipal: (tenantId, userId) => loadPrincipal(db.knex, tenantId, userId),
    };
    services.authenticate = authenticate(services);

    if (runsWorkers) {
      // Writes a crash cut short are completed first: seeding below reads the tenants they create.
      await completePendingPlans(services, { olderThanMs: 0, now: clock.now() }).catch((error) =>
        logger.error({ err: error }, 'completing interrupted multi-stream writes failed; the job tries again every minute'),
      );
      for (const seed of allUpgradeSeeds()) {
        const seeding = seed.run(services).then(
          (seeded) => seeded && logger.info({ seeded }, `seeded ${seed.what} of tenants registered before it existed`),
          (error) => logger.error({ err: error }, `seeding ${seed.what} of older tenants failed`),
        );
        cleanups.push(() => seeding);
      }
    }
    if (runsWorkers && overrides.schedule !== false) {
      const scheduler = new Scheduler({ locks, logger }, allJobs(services));
      scheduler.start();
      cleanups.push(() => scheduler.close());
    }

    const app = createHttpApp({
      trustProxy: config.TRUST_PROXY,
      basePath: config.API_BASE_PATH,
      bodyLimit: config.BODY_LIMIT,
      corsOrigins: config.CORS_ORIGINS,
      referenceClientOrigins: config.REFERENCE_CLIENT_ORIGINS,
      multipartPaths: modules.flatMap((m) => (m.routes ?? []).filter((r) => r.multipart).map((r) => r.path)),
      logger,
      metricsToken: config.METRICS_TOKEN,
      health: () => checkHealth({ knex: db.knex, store, progress: projections.progress, clock, sagas: runsWorkers ? (overrides.sagas ?? allSagas()).map((s) => s.name) : [] }),
      mountApi:
        config.ROLE === 'worker'
          ? undefined
          : (router) => {
              overrides.mountApi?.(router, services);
              // GET /openapi.json and /docs, public, generated from the modules' routers and schemas.
              router.use(apiDocsRouter({ modules, services, basePath: config.API_BASE_PATH }));
              for (const module of modules) mountModule(router, services, module);
            },
    });
    const server = await new Promise<Server>((resolve, reject) => {
      const s = createServer(httpServerOptions(config), app);
      s.once('error', reject);
      s.listen(config.PORT, config.HOST, () => resolve(s));
    });
    cleanups.push(() => {
      // Open feed streams end with the server's close (in the same tick: the server stops listening at once).
      stopping.abort();
      return closeServer(server, config.SHUTDOWN_TIMEOUT_MS);
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    logger.info({ port, role: config.ROLE, basePath: config.API_BASE_PATH, eventStore: store.name }, 'service listening');

    return { services, server, port, stop: cleanUp };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** Read-your-writes over the given projections (all when none are named): a stored write is never answered as if it failed. */
function waitingFor(engine: ProjectionEngine, timeoutMs: number, names?: readonly string[]): Services['waitForProjections'] {
  return async (position, created) => {
    if (!(await engine.waitFor(position, timeoutMs, names))) throw notYetReadable(created);
  };
}

/**
 * Mounts each of a module's routers at its own path prefix: behind the shared authentication (unless public), with a
 * read-your-writes wait that covers only the projections the module's responses read.
 */
function mountModule(api: Router, services: Services, module: ModuleManifest): void {
  const reads = module.reads?.map((p) => p.name);
  const scoped: Services = reads
    ? {
        ...services,
        waitForProjections: waitingFor(services.projections, services.config.PROJECTION_WAIT_MS, reads),
        readsWrittenWithAppends: () => services.projections.allInline(reads),
        readAlong: (statementFor) => (reads.length ? { needs: reads, statementFor } : undefined),
      }
    : services;
  // Idempotency-Key needs the caller, known here for every authenticated router.
  const idempotent = idempotentPosts(services);
  for (const routes of module.routes ?? []) {
    if (routes.public) api.use(routes.path, routes.router(scoped));
    else api.use(routes.path, services.authenticate, idempotent, routes.router(scoped));
  }
}

/** Stops accepting connections, lets in-flight requests finish, then cuts what is left. */
function closeServer(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
