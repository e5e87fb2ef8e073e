import { createECDH, createHmac, createDecipheriv, createPublicKey, randomBytes, verify, type ECDH } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A browser's side of a push subscription: its P-256 key pair and auth secret (RFC 8291). */
export class TestBrowser {
  readonly ecdh: ECDH = createECDH('prime256v1');
  readonly auth = randomBytes(16);
  constructor(readonly endpoint: string) {
    this.ecdh.generateKeys();
  }
  /** What `PushSubscription.toJSON()` gives the page. */
  get subscription() {
    return { endpoint: this.endpoint, expirationTime: null, keys: { p256dh: this.ecdh.getPublicKey().toString('base64url'), auth: this.auth.toString('base64url') } };
  }

  /** Decrypts an aes128gcm body (RFC 8188 record, RFC 8291 keys) as the browser would. */
  decrypt(body: Buffer): string {
    const salt = body.subarray(0, 16);
    const idLength = body[20];
    const serverPublic = body.subarray(21, 21 + idLength);
    const ciphertext = body.subarray(21 + idLength);
    const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();
    const shared = this.ecdh.computeSecret(serverPublic);
    const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), this.ecdh.getPublicKey(), serverPublic, Buffer.from([1])]);
    const ikm = hmac(hmac(this.auth, shared), keyInfo);
    const prk = hmac(salt, ikm);
    const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01', 'binary')).subarray(0, 16);
    const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01', 'binary')).subarray(0, 12);
    const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
    decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
    const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
    // The last record ends with the delimiter 0x02, then zero padding.
    return padded.subarray(0, padded.lastIndexOf(2)).toString('utf8');
  }
}

export interface ReceivedPush {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A push service on 127.0.0.1: keeps every request, answers each path's configured status (201 by default). */
export class TestPushService {
  readonly received: ReceivedPush[] = [];
  readonly statusFor = new Map<string, number>();
  private constructor(private readonly server: http.Server, readonly origin: string) {}

  static async start(): Promise<TestPushService> {
    let service: TestPushService;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        service.received.push({ path, headers: req.headers, body: Buffer.concat(chunks) });
        res.statusCode = service.statusFor.get(path) ?? 201;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    service = new TestPushService(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return service;
  }

  /** A new browser subscribed at this service under a path of its own. */
  browser(): TestBrowser {
    return new TestBrowser(`${this.origin}/push/${randomBytes(12).toString('hex')}`);
  }

  to(browser: TestBrowser): ReceivedPush[] {
    return this.received.filter((r) => this.origin + r.path === browser.endpoint);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Checks a VAPID `Authorization: vapid t=<JWT>, k=<public key>` header (RFC 8292): the JWT
 * is ES256-signed by the key `k`, for `audience`, not expired. Returns its claims and key.
 */
export function verifyVapid(header: string | undefined, audience: string, now = Date.now()): { claims: { aud: string; exp: number; sub: string }; publicKey: string } {
  const match = /^vapid t=([A-Za-z0-9_.-]+), k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!match) throw new Error(`not a VAPID authorization: ${header}`);
  const [, jwt, publicKey] = match;
  const [head, payload, signature] = jwt.split('.');
  const raw = Buffer.from(publicKey, 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url') }, format: 'jwk' });
  if (JSON.parse(Buffer.from(head, 'base64url').toString()).alg !== 'ES256') throw new Error('not ES256');
  const valid = verify('sha256', Buffer.from(`${head}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!valid) throw new Error('the JWT signature does not verify with k');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  if (claims.aud !== audience) throw new Error(`aud ${claims.aud}, expected ${audience}`);
  if (!(claims.exp * 1000 > now)) throw new Error('the JWT has expired');
  return { claims, publicKey };
}
