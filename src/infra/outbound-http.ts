import { lookup as systemLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';

/**
 * Every HTTP call the service makes to a URL someone configured (workflow webhooks, the SMS
 * provider, later form webhooks and webhook subscriptions) goes through `outboundRequest`.
 * A configured URL must not reach the service's own network (SSRF): the host is resolved,
 * and loopback, private, link-local (cloud metadata), unspecified, CGNAT, multicast and
 * reserved addresses, including IPv4 hidden in IPv6 forms, are refused unless the host is in
 * the allow-list (`OUTBOUND_ALLOWED_HOSTS`). The connection goes to the very address that was
 * checked (no second DNS answer can swap it), and redirects are never followed: a 3xx is
 * answered as it is.
 */

export interface OutboundRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The whole call: resolving, connecting, sending and reading the answer. Default 30 s. */
  timeoutMs?: number;
  /** False: any TLS certificate is accepted (self-signed receivers). Default true. */
  verifyTls?: boolean;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  /** The first RESPONSE_BODY_CHARS characters of the body, as UTF-8 text. */
  body: string;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface OutboundPolicy {
  /** `host` (any port) or `host:port`, lower-case; IPv6 as `[::1]` or `[::1]:8080`. */
  allowedHosts: readonly string[];
  /** Name resolution; the system resolver unless given. */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
}

/** The call was not made: the URL's scheme or address is not allowed. The message names the host, never the full URL. */
export class OutboundRefused extends Error {}

/** The call was made but failed: no connection, a TLS error, a timeout, a bad request. */
export class OutboundFailed extends Error {
  constructor(
    message: string,
    readonly reason: 'timeout' | 'network' | 'tls' | 'invalid',
  ) {
    super(message);
  }
}

export const RESPONSE_BODY_CHARS = 2000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** More than enough bytes for RESPONSE_BODY_CHARS characters of UTF-8; the rest is not read. */
const RESPONSE_BODY_BYTES = RESPONSE_BODY_CHARS * 4;

const refusedIPv4 = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  refusedIPv4.addSubnet(network, prefix, 'ipv4');
}

const refusedIPv6 = new net.BlockList();
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): translates to whatever the local network chooses
  ['100::', 64], // discard-only
  ['fc00::', 7], // unique local (private), incl. fd00:ec2::254 metadata
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  refusedIPv6.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((g) => parseInt(g, 16));
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/** The IPv4 address an IPv6 form carries (mapped, compatible, NAT64, 6to4), else null. */
function embeddedIPv4(address: string): string | null {
  const g = ipv6Groups(address);
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(5) && g[5] === 0xffff) return ipv4Of(g[6], g[7]); // ::ffff:a.b.c.d
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return ipv4Of(g[6], g[7]); // ::ffff:0:a.b.c.d (IPv4-translated, RFC 2765)
  if (zeroUpTo(6) && (g[6] !== 0 || g[7] > 1)) return ipv4Of(g[6], g[7]); // ::a.b.c.d (deprecated compatible form)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return ipv4Of(g[6], g[7]); // NAT64
  if (g[0] === 0x2002) return ipv4Of(g[1], g[2]); // 6to4
  return null;
}

/** Why an address may not be called, or null when it may. */
export function refusedAddressReason(address: string): string | null {
  const family = net.isIP(address);
  if (family === 4) return refusedIPv4.check(address, 'ipv4') ? 'a loopback, private, link-local or reserved address' : null;
  if (family === 6) {
    if (refusedIPv6.check(address, 'ipv6')) return 'a loopback, private, link-local or reserved address';
    const inner = embeddedIPv4(address);
    return inner ? refusedAddressReason(inner) : null;
  }
  return 'not an IP address';
}

const defaultPort = (protocol: string) => (protocol === 'https:' ? '443' : '80');

function isAllowedHost(url: URL, allowedHosts: readonly string[]): boolean {
  const host = url.hostname.toLowerCase();
  const withPort = `${host}:${url.port || defaultPort(url.protocol)}`;
  return allowedHosts.some((entry) => entry === host || entry === withPort);
}

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await systemLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/** The address to connect to, checked against the policy. */
async function vettedAddress(url: URL, policy: OutboundPolicy): Promise<ResolvedAddress> {
  const bare = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = net.isIP(bare);
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: bare, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await (policy.resolve ?? systemResolve)(bare);
    } catch {
      throw new OutboundFailed(`could not resolve ${url.hostname}`, 'network');
    }
    if (addresses.length === 0) throw new OutboundFailed(`could not resolve ${url.hostname}`, 'network');
  }
  if (isAllowedHost(url, policy.allowedHosts)) return addresses[0];
  // Every answer must be acceptable: a name that also points inside is refused outright.
  for (const { address } of addresses) {
    const reason = refusedAddressReason(address);
    if (reason) throw new OutboundRefused(`refused to call ${url.hostname}: it resolves to ${reason}`);
  }
  return addresses[0];
}

/** A lookup that answers every name with the vetted address, so the socket connects where the check looked. */
function pinnedLookup(vetted: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: vetted.address, family: vetted.family }]);
    else callback(null, vetted.address, vetted.family);
  }) as LookupFunction;
}

export function parseOutboundUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundRefused('refused to call an invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefused(`refused to call a ${url.protocol.replace(/:$/, '')}: URL: only http and https are allowed`);
  return url;
}

const TLS_CODES = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/;

/** Makes one call under the policy; refusals throw OutboundRefused, failures OutboundFailed; any HTTP status is an answer. */
export async function outboundRequest(request: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse> {
  const url = parseOutboundUrl(request.url);
  const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const timedOut = () => new OutboundFailed(`${url.hostname} did not answer within ${Math.round(timeoutMs / 100) / 10} s`, 'timeout');
  try {
    const vetted = await Promise.race([
      vettedAddress(url, policy),
      new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(timedOut()), { once: true })),
    ]);
    return await send(url, request, vetted, abort.signal, timedOut);
  } finally {
    clearTimeout(timer);
  }
}

function send(url: URL, request: OutboundRequest, vetted: ResolvedAddress, signal: AbortSignal, timedOut: () => OutboundFailed): Promise<OutboundResponse> {
  const transport = url.protocol === 'https:' ? https : http;
  const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
  return new Promise<OutboundResponse>((resolve, reject) => {
    let req: http.ClientRequest;
    try {
      req = transport.request({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port || defaultPort(url.protocol),
        path: `${url.pathname}${url.search}`,
        method: (request.method ?? 'GET').toUpperCase(),
        headers: { ...request.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
        lookup: pinnedLookup(vetted),
        agent: false,
        rejectUnauthorized: request.verifyTls !== false,
        servername: net.isIP(url.hostname) ? undefined : url.hostname,
      });
    } catch (error) {
      // Node checks method and header names and values before anything is sent.
      reject(new OutboundFailed(`invalid request: ${(error as Error).message}`, 'invalid'));
      return;
    }
    const onAbort = () => {
      req.destroy();
      reject(timedOut());
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error: NodeJS.ErrnoException) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) return reject(timedOut());
      const code = error.code ?? '';
      const reason = TLS_CODES.test(code) ? 'tls' : 'network';
      reject(new OutboundFailed(`calling ${url.hostname} failed: ${code || error.message}${reason === 'tls' ? ` (${error.message})` : ''}`, reason));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        signal.removeEventListener('abort', onAbort);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_CHARS) });
      };
      res.on('data', (chunk: Buffer) => {
        if (size >= RESPONSE_BODY_BYTES) return;
        chunks.push(chunk);
        size += chunk.length;
        // Enough of the body to show: the rest is not waited for.
        if (size >= RESPONSE_BODY_BYTES) {
          finish();
          res.destroy();
        }
      });
      res.on('end', finish);
      res.on('error', () => finish());
    });
    req.end(body);
  });
}

/** The policy from the service's configuration, with extra hosts the caller itself trusts (the configured SMS provider). */
export function outboundPolicy(allowedHosts: readonly string[], ...trusted: URL[]): OutboundPolicy {
  return { allowedHosts: [...allowedHosts, ...trusted.map((u) => `${u.hostname.toLowerCase()}:${u.port || defaultPort(u.protocol)}`)] };
}
