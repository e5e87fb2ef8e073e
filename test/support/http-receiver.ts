import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (a slow receiver). */
  delayMs?: number;
}

/** A self-signed certificate for 127.0.0.1 and localhost (test only, valid for 100 years). */
const tlsFixture = () => ({
  key: readFileSync(new URL('./tls/self-signed.key', import.meta.url)),
  cert: readFileSync(new URL('./tls/self-signed.crt', import.meta.url)),
});

/**
 * A real HTTP (or HTTPS, self-signed) server on 127.0.0.1 that keeps every request and answers
 * with `reply` (a webhook receiver, an SMS provider).
 */
export class HttpReceiver {
  readonly received: ReceivedRequest[] = [];
  /** Requests received and not answered yet (a slow reply under way), by path. */
  private readonly waiting = new Map<string, number>();
  reply: (request: ReceivedRequest) => Reply = () => ({ status: 200, body: 'ok' });
  port = 0;
  private readonly sockets = new Set<net.Socket>();

  private constructor(private readonly server: http.Server) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.received.push(request);
        const reply = this.reply(request);
        this.waiting.set(request.url, (this.waiting.get(request.url) ?? 0) + 1);
        setTimeout(() => {
          this.waiting.set(request.url, this.waiting.get(request.url)! - 1);
          if (res.destroyed) return;
          res.writeHead(reply.status ?? 200, reply.headers ?? { 'content-type': 'text/plain' });
          res.end(reply.body ?? '');
        }, reply.delayMs ?? 0);
      });
    });
  }

  static async start(options: { tls?: boolean } = {}): Promise<HttpReceiver> {
    const server = options.tls ? https.createServer(tlsFixture()) : http.createServer();
    const receiver = new HttpReceiver(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    receiver.port = (server.address() as net.AddressInfo).port;
    return receiver;
  }

  url(path = '/', host = '127.0.0.1'): string {
    return `${this.server instanceof https.Server ? 'https' : 'http'}://${host}:${this.port}${path}`;
  }

  /** How many requests to this path are waiting for their answer now. */
  unanswered(url: string): number {
    return this.waiting.get(url) ?? 0;
  }

  get last(): ReceivedRequest {
    const last = this.received.at(-1);
    if (!last) throw new Error('the receiver got no request');
    return last;
  }

  stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
