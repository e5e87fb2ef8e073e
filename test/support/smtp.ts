import net from 'node:net';
import { SMTPServer } from 'smtp-server';

/** The token of the first `token=` link in a mail body. */
export const tokenFrom = (body: string): string => /token=([A-Za-z0-9_-]+)/.exec(body)![1];

/** Undoes quoted-printable soft breaks and escapes, enough to find a link in a body. */
export function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export interface Received {
  from: string | null;
  to: string[];
  raw: string;
}

/** A real SMTP listener on 127.0.0.1: no TLS, no auth, keeps what it is given. */
export class TestSmtpServer {
  readonly received: Received[] = [];
  /** While set, every message is refused with a permanent error after its DATA. */
  rejecting = false;
  port = 0;
  private server: SMTPServer;

  private constructor() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (this.rejecting) {
            const error = Object.assign(new Error('mailbox unavailable'), { responseCode: 550 });
            return callback(error);
          }
          this.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
  }

  /** Listens on `port`, or on a free one when 0. */
  static async start(port = 0): Promise<TestSmtpServer> {
    const smtp = new TestSmtpServer();
    const address = await new Promise<net.AddressInfo>((resolve, reject) => {
      const listener = smtp.server.listen(port, '127.0.0.1', () => resolve(listener.address() as net.AddressInfo));
      listener.once('error', reject);
    });
    smtp.port = address.port;
    return smtp;
  }

  /** nodemailer only tries STARTTLS when the server offers it; this one does not. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Waits until a message to `to` arrives (mail may be sent after the response); returns its decoded body. */
  async waitFor(to: string, ms = 10_000): Promise<string> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.received.find((m) => m.to.includes(to));
      if (found) return decodeQuotedPrintable(found.raw);
      if (Date.now() > deadline) throw new Error(`no mail to ${to}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

