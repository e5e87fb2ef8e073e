import { ConfigError, loadConfig } from './infra/config.js';
import { describeError } from './infra/describe-error.js';
import { flushLogs } from './infra/logger.js';
import { startService } from './service.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const running = await startService(config);
  const logger = running.services.logger;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.stop().then(
      () => {
        logger.info('stopped');
        flushLogs(logger);
        process.exit(0);
      },
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        flushLogs(logger);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`failed to start: ${describeError(error)}\n`);
  process.exit(1);
});
