import { expect } from 'chai';
import { isEmail, isPhone, isStageFieldKey, isWebsite, leadColumnProblem, parseDateText, roundMoney } from '../../src/domain/field-rules.js';

describe('field rules (one module for the HTTP schemas and the deciders)', () => {
  describe('a web address', () => {
    it('is a host name of dot-separated labels, with or without http(s)://, a port and a path', () => {
      for (const site of ['example.com', 'www.example.co.uk', 'my-site.com', 'https://example.com', 'http://example.com:8080/a/b?c=d#e', 'example.com/about', 'münchen.de']) {
        expect(isWebsite(site), site).to.equal(true);
      }
    });

    it('is not a host name with an underscore (my_site.com), with or without a scheme', () => {
      expect(isWebsite('my_site.com')).to.equal(false);
      expect(isWebsite('https://my_site.com')).to.equal(false);
    });

    it('is not a single label, text with spaces, another scheme or a user name before the host', () => {
      for (const site of ['localhost', 'not a url', 'ftp://example.com', 'https://user@example.com', 'example.com is fine']) {
        expect(isWebsite(site), site).to.equal(false);
      }
    });
  });

  it('an email address follows the pattern z.email() uses', () => {
    expect(isEmail('ada.lovelace+crm@example.co.uk')).to.equal(true);
    for (const bad of ['not-an-email', 'a@b', 'a@my_host.com', 'a b@example.com', 'a@example.c']) expect(isEmail(bad), bad).to.equal(false);
  });

  it('a phone number is digits, spaces and + ( ) . - /', () => {
    expect(isPhone('+44 (20) 7946-0000')).to.equal(true);
    expect(isPhone('call me')).to.equal(false);
  });

  it('a date text is read only when its calendar day exists and its year is 1–9999', () => {
    expect(parseDateText('2026-01-31')?.toISOString()).to.equal('2026-01-31T00:00:00.000Z');
    expect(parseDateText(' 2028-02-29 ')?.toISOString()).to.equal('2028-02-29T00:00:00.000Z');
    expect(parseDateText('2026-03-01T09:30:00+02:00')?.toISOString()).to.equal('2026-03-01T07:30:00.000Z');
    expect(parseDateText('0001-01-01')?.toISOString()).to.equal('0001-01-01T00:00:00.000Z');
    for (const bad of ['2026-02-30', '2026-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-02-30T10:00:00Z', '10000-01-01', '0000-12-31', 'soon', '']) {
      expect(parseDateText(bad), bad).to.equal(null);
    }
  });

  it('money keeps 2 decimals', () => {
    expect(roundMoney(10.005)).to.equal(10.01);
    expect(roundMoney(99.994)).to.equal(99.99);
  });

  it('a lead column value is judged trimmed, by its column’s rule', () => {
    expect(leadColumnProblem('website', ' example.com ')).to.equal(null);
    expect(leadColumnProblem('website', 'my_site.com')).to.equal('a web address');
    expect(leadColumnProblem('email', '   ')).to.equal(null);
    expect(leadColumnProblem('firstName', 'x'.repeat(101))).to.equal('at most 100 characters');
    expect(leadColumnProblem('estimatedValue', -1)).to.equal('a non-negative number');
    expect(leadColumnProblem('company', 42)).to.equal('text');
  });

  it('a stage field key is a lead column, qualification.<key>, custom.<key>, or alternatives joined by ||', () => {
    for (const key of ['email', 'qualification.budget', 'custom.industry', 'phone || mobile']) expect(isStageFieldKey(key), key).to.equal(true);
    for (const key of ['unknownColumn', 'custom.', 'other.key', 'email||nope']) expect(isStageFieldKey(key), key).to.equal(false);
  });
});
