import { expect } from 'chai';
import { loadConfig } from '../../src/infra/config.js';
import {
  OutboundFailed,
  OutboundRefused,
  outboundRequest,
  refusedAddressReason,
  type OutboundPolicy,
  type OutboundRequest,
} from '../../src/infra/outbound-http.js';
import { HttpReceiver } from '../support/http-receiver.js';

async function failureOf(request: OutboundRequest, policy: OutboundPolicy): Promise<Error> {
  try {
    await outboundRequest(request, policy);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`expected ${request.url} to fail`);
}

describe('outbound HTTP', () => {
  let receiver: HttpReceiver;
  let tlsReceiver: HttpReceiver;
  const nothingAllowed: OutboundPolicy = { allowedHosts: [] };
  const loopbackAllowed: OutboundPolicy = { allowedHosts: ['127.0.0.1'] };

  before(async () => {
    receiver = await HttpReceiver.start();
    tlsReceiver = await HttpReceiver.start({ tls: true });
  });
  after(async () => {
    await receiver.stop();
    await tlsReceiver.stop();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.reply = () => ({ status: 200, body: 'ok' });
  });

  describe('to an allowed host', () => {
    it('sends method, headers and body, and answers status, headers and body', async () => {
      receiver.reply = () => ({ status: 201, headers: { 'content-type': 'application/json', 'x-answer': '42' }, body: '{"received":true}' });
      const response = await outboundRequest(
        { url: receiver.url('/hooks/in?x=1'), method: 'put', headers: { 'content-type': 'application/json', 'x-custom': 'yes' }, body: '{"a":1}' },
        loopbackAllowed,
      );
      expect(response.status).to.equal(201);
      expect(response.headers['x-answer']).to.equal('42');
      expect(response.body).to.equal('{"received":true}');
      expect(receiver.last).to.include({ method: 'PUT', url: '/hooks/in?x=1', body: '{"a":1}' });
      expect(receiver.last.headers['x-custom']).to.equal('yes');
    });

    it('keeps the first 2,000 characters of a long answer', async () => {
      receiver.reply = () => ({ body: 'é'.repeat(50_000) });
      const response = await outboundRequest({ url: receiver.url() }, loopbackAllowed);
      expect(response.body).to.equal('é'.repeat(2000));
    });

    it('answers a redirect as it is, without following it', async () => {
      receiver.reply = () => ({ status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } });
      const response = await outboundRequest({ url: receiver.url('/moved') }, loopbackAllowed);
      expect(response.status).to.equal(302);
      expect(response.headers.location).to.equal('http://169.254.169.254/latest/meta-data/');
      expect(receiver.received).to.have.length(1);
    });

    it('gives up after the timeout with a clear error', async () => {
      receiver.reply = () => ({ delayMs: 2000 });
      const started = Date.now();
      const error = await failureOf({ url: receiver.url('/slow'), timeoutMs: 200 }, loopbackAllowed);
      expect(error).to.be.instanceOf(OutboundFailed);
      expect((error as OutboundFailed).reason).to.equal('timeout');
      expect(error.message).to.equal('127.0.0.1 did not answer within 0.2 s');
      expect(Date.now() - started).to.be.below(1500);
    });

    it('reports a refused connection as a network failure', async () => {
      const closed = await HttpReceiver.start();
      const closedUrl = closed.url('/');
      await closed.stop();
      const error = await failureOf({ url: closedUrl }, loopbackAllowed);
      expect(error).to.be.instanceOf(OutboundFailed);
      expect((error as OutboundFailed).reason).to.equal('network');
      expect(error.message).to.match(/^calling 127\.0\.0\.1 failed: ECONNREFUSED/);
    });

    it('checks TLS certificates unless told not to', async () => {
      const checked = await failureOf({ url: tlsReceiver.url('/') }, loopbackAllowed);
      expect(checked).to.be.instanceOf(OutboundFailed);
      expect((checked as OutboundFailed).reason).to.equal('tls');
      const unchecked = await outboundRequest({ url: tlsReceiver.url('/'), verifyTls: false }, loopbackAllowed);
      expect(unchecked.status).to.equal(200);
    });

    it('allows a host only on the port the allow-list names', async () => {
      const onPort = await outboundRequest({ url: receiver.url('/') }, { allowedHosts: [`127.0.0.1:${receiver.port}`] });
      expect(onPort.status).to.equal(200);
      const otherPort = await failureOf({ url: receiver.url('/') }, { allowedHosts: ['127.0.0.1:1'] });
      expect(otherPort).to.be.instanceOf(OutboundRefused);
    });

    it('connects to the address it checked, not to a second answer of the name server', async () => {
      let lookups = 0;
      const policy: OutboundPolicy = {
        allowedHosts: ['hooks.test'],
        resolve: async () => {
          lookups++;
          return [{ address: '127.0.0.1', family: 4 }];
        },
      };
      const response = await outboundRequest({ url: `http://hooks.test:${receiver.port}/pinned` }, policy);
      expect(response.status).to.equal(200);
      expect(lookups).to.equal(1);
      expect(receiver.last.headers.host).to.equal(`hooks.test:${receiver.port}`);
    });
  });

  describe('refusals', () => {
    const refused = async (url: string, policy: OutboundPolicy = nothingAllowed) => {
      const error = await failureOf({ url, timeoutMs: 5000 }, policy);
      expect(error, url).to.be.instanceOf(OutboundRefused);
      return error.message;
    };

    it('refuses loopback, private, link-local and metadata addresses, sending nothing', async () => {
      expect(await refused(receiver.url('/'))).to.equal('refused to call 127.0.0.1: it resolves to a loopback, private, link-local or reserved address');
      await refused('http://10.0.0.1/hook');
      await refused('http://169.254.169.254/latest/meta-data/');
      await refused('http://192.168.1.10/');
      await refused('http://172.16.0.1/');
      await refused('http://100.64.0.1/');
      await refused('http://0.0.0.0/');
      await refused('http://224.0.0.1/');
      await refused(`http://[::1]:${receiver.port}/`);
      await refused('http://[fe80::1]/');
      await refused('http://[fd00:ec2::254]/');
      await refused(`http://[::ffff:127.0.0.1]:${receiver.port}/`);
      await refused('http://[::ffff:a9fe:a9fe]/');
      // Spellings of 127.0.0.1 the URL parser turns into the dotted form: decimal, octal, hexadecimal, shortened.
      for (const host of ['2130706433', '0177.0.0.1', '0x7f.0.0.1', '127.1']) await refused(`http://${host}:${receiver.port}/`);
      expect(receiver.received).to.have.length(0);
    });

    it('refuses names that resolve to loopback', async () => {
      expect(await refused(`http://localhost:${receiver.port}/`)).to.equal('refused to call localhost: it resolves to a loopback, private, link-local or reserved address');
      // A name answered with a public and a private address is refused as a whole.
      await refused('http://internal.test/', { allowedHosts: [], resolve: async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.1.2.3', family: 4 }] });
      expect(receiver.received).to.have.length(0);
    });

    it('refuses schemes other than http and https, even for an allowed host', async () => {
      expect(await refused('file:///etc/passwd', loopbackAllowed)).to.equal('refused to call a file: URL: only http and https are allowed');
      expect(await refused('ftp://127.0.0.1/x', loopbackAllowed)).to.equal('refused to call a ftp: URL: only http and https are allowed');
      await refused('not a url');
    });

    it('never names the path or query of a refused URL (they may carry keys)', async () => {
      const message = await refused('http://10.0.0.1/hook?apiKey=s3cr3t');
      expect(message).not.to.contain('s3cr3t');
    });
  });

  describe('the address rules', () => {
    it('lets public addresses through', () => {
      for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
        expect(refusedAddressReason(address), address).to.equal(null);
      }
    });

    it('refuses IPv4 hidden in IPv6 forms', () => {
      for (const address of ['::ffff:10.0.0.1', '::ffff:7f00:1', '64:ff9b::a9fe:a9fe', '2002:c0a8:0101::1', '::127.0.0.1', '::ffff:0:127.0.0.1', '::ffff:0:a9fe:a9fe', '64:ff9b:1::8.8.8.8', '64:ff9b:1:ab::1']) {
        expect(refusedAddressReason(address), address).to.be.a('string');
      }
    });
  });

  describe('configuration', () => {
    it('reads OUTBOUND_ALLOWED_HOSTS as a lower-case list, empty by default', () => {
      expect(loadConfig({}).OUTBOUND_ALLOWED_HOSTS).to.deep.equal([]);
      expect(loadConfig({ OUTBOUND_ALLOWED_HOSTS: ' Hooks.Internal , 127.0.0.1:8080,,' }).OUTBOUND_ALLOWED_HOSTS).to.deep.equal(['hooks.internal', '127.0.0.1:8080']);
    });
  });
});
