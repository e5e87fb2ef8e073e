import type { ServerOptions } from 'node:http';
import type { Config } from '../infra/config.js';

/**
 * Node's HTTP server options for the timeouts, so a client that sends less than it announced
 * (a body shorter than its Content-Length, headers dribbled out) cannot hold a connection:
 * the whole request must arrive within HTTP_REQUEST_TIMEOUT_MS (else 408 and the connection
 * is closed), its headers within HTTP_HEADERS_TIMEOUT_MS, and an idle keep-alive connection
 * is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS. Node checks the first two on an interval
 * (30 s unless told), made short here so a timeout takes effect within about half its length.
 */
export function httpServerOptions(
  config: Pick<Config, 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'>,
): ServerOptions {
  return {
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(config.HTTP_HEADERS_TIMEOUT_MS / 2))),
  };
}
