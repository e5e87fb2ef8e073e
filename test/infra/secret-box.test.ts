import { expect } from 'chai';
import { SEALED_COLUMNS, SecretBox, SecretBoxError } from '../../src/infra/secret-box.js';

const KEY = 'k'.repeat(32);
const OLD_KEY = 'o'.repeat(40);
const place = SEALED_COLUMNS.webhookSecret;
const row = { subscription_id: '8c0d6a52-52f4-4a34-9d0c-4f5f3b1e2a10' };
const otherRow = { subscription_id: '0f9a3c2e-1b1e-4c5e-8a77-2d8f1c6e9b01' };
const SECRET = 'whsec_live-signing-secret';

describe('the secret box', () => {
  it('without a key stores a secret as given and opens it as it is', () => {
    const box = new SecretBox();
    expect(box.encrypting).to.equal(false);
    expect(box.seal(place, row, SECRET)).to.equal(SECRET);
    expect(box.open(place, row, SECRET)).to.equal(SECRET);
  });

  it('with a key stores ciphertext naming the key, different every time, that opens to the secret', () => {
    const box = new SecretBox(KEY);
    const first = box.seal(place, row, SECRET);
    const second = box.seal(place, row, SECRET);
    expect(first).to.match(/^enc:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(first.startsWith(box.sealedPrefix!)).to.equal(true);
    expect(first).to.not.contain('whsec').and.to.not.equal(second);
    expect(box.open(place, row, first)).to.equal(SECRET);
    expect(box.open(place, row, second)).to.equal(SECRET);
    // Values stored before the key was set still open.
    expect(box.open(place, row, SECRET)).to.equal(SECRET);
  });

  it('refuses a sealed value moved to another row or column, or altered', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal(place, row, SECRET);
    expect(() => box.open(place, otherRow, sealed)).to.throw(SecretBoxError, /moved from another row/).with.property('keyMissing', false);
    expect(() => box.open(SEALED_COLUMNS.vapidPrivateKey, { tenant_id: row.subscription_id }, sealed)).to.throw(SecretBoxError);
    const payload = sealed.split(':')[3];
    const flipped = `${sealed.slice(0, -payload.length)}${payload.slice(0, -2)}${payload.endsWith('AA') ? 'AB' : 'AA'}`;
    expect(() => box.open(place, row, flipped)).to.throw(SecretBoxError);
    expect(() => box.open(place, row, 'enc:v1:')).to.throw(SecretBoxError);
  });

  it('opens what a previous key sealed, and names the missing key when it was not given', () => {
    const sealedOld = new SecretBox(OLD_KEY).seal(place, row, SECRET);
    expect(new SecretBox(KEY, [OLD_KEY]).open(place, row, sealedOld)).to.equal(SECRET);
    expect(() => new SecretBox(KEY).open(place, row, sealedOld)).to.throw(SecretBoxError, /SECRETS_ENCRYPTION_KEY_PREVIOUS/).with.property('keyMissing', true);
    // Only previous keys: nothing is sealed any more, what they sealed still opens (how encryption is turned off).
    const unsealing = new SecretBox(undefined, [OLD_KEY]);
    expect(unsealing.encrypting).to.equal(false);
    expect(unsealing.open(place, row, sealedOld)).to.equal(SECRET);
    expect(unsealing.seal(place, row, SECRET)).to.equal(SECRET);
    expect(() => new SecretBox().open(place, row, sealedOld)).to.throw(SecretBoxError, /not configured/);
  });

  it('keeps any text whole: multi-byte, empty and long secrets', () => {
    const box = new SecretBox(KEY);
    for (const secret of ['', 'pässwörd 😀', 'x'.repeat(10_000)]) expect(box.open(place, row, box.seal(place, row, secret))).to.equal(secret);
  });
});
