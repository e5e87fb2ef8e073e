import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { AccessTokens } from '../../src/commands/identity/tokens.js';

describe('access tokens', () => {
  const claims = { sub: randomUUID(), tid: randomUUID(), role: 'admin', sep: 2 };

  it('verifies a token it signed, again from memory, and not once it has expired', async () => {
    const tokens = new AccessTokens('a-secret-of-enough-length-for-tests', 1);
    const token = tokens.sign(claims);
    expect(tokens.verify(token)).to.deep.equal(claims);
    expect(tokens.verify(token)).to.deep.equal(claims);
    expect(Object.isFrozen(tokens.verify(token))).to.equal(true);
    // Expiry has a resolution of a second.
    await new Promise((resolve) => setTimeout(resolve, 2_050));
    expect(tokens.verify(token)).to.equal(null);
  });

  it('refuses a token signed with another key, or altered, even after the genuine one was verified', () => {
    const tokens = new AccessTokens('a-secret-of-enough-length-for-tests', 60);
    const other = new AccessTokens('another-secret-of-enough-length', 60);
    const token = tokens.sign(claims);
    expect(tokens.verify(token)).to.deep.equal(claims);
    expect(tokens.verify(other.sign(claims))).to.equal(null);
    const [header, payload, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), role: 'owner' })).toString('base64url');
    expect(tokens.verify(`${header}.${forged}.${signature}`)).to.equal(null);
    expect(tokens.verify(`${token}x`)).to.equal(null);
  });
});
