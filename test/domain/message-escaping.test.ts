import { expect } from 'chai';
import { e164Of } from '../../src/domain/field-rules.js';
import { headerValueEscape, htmlEscape, interpolate, jsonStringEscape, urlComponentEscape } from '../../src/domain/workflow-templates.js';

const HOSTILE = 'a "b" \\ c\r\nd\u2028</script>&\'';
const record = { first_name: HOSTILE };

describe('escaping {{trigger}} values for their channel', () => {
  it('HTML: a value shows as text, never as markup', () => {
    expect(interpolate('<p>{{trigger.firstName}}</p>', record, htmlEscape)).to.equal('<p>a &quot;b&quot; \\ c\r\nd\u2028&lt;/script&gt;&amp;&#39;</p>');
  });

  it('JSON: a value stays inside its string and reads back unchanged', () => {
    const json = interpolate('{"name": "{{trigger.first_name}}"}', record, jsonStringEscape);
    expect(JSON.parse(json)).to.deep.equal({ name: HOSTILE });
    expect(json).not.to.match(/<\/script>|[\r\n\u2028]/);
  });

  it('URL: a value is one component', () => {
    expect(interpolate('https://x.test/c/{{trigger.id}}', { id: '../a?b=1#c d' }, urlComponentEscape)).to.equal('https://x.test/c/..%2Fa%3Fb%3D1%23c%20d');
  });

  it('headers: line breaks and control characters are dropped, tabs kept', () => {
    expect(headerValueEscape('a\r\nSet-Cookie: x\u0000\u007f\tb')).to.equal('aSet-Cookie: x\tb');
  });
});

describe('international phone numbers for text messages', () => {
  it('accepts + and 8 to 15 digits, dropping separators', () => {
    expect(e164Of('+44 20 7946 0958')).to.equal('+442079460958');
    expect(e164Of(' +1 (415) 555-0100 ')).to.equal('+14155550100');
    expect(e164Of('+49.30/901820')).to.equal('+4930901820');
    expect(e164Of('+12345678')).to.equal('+12345678');
    expect(e164Of('+123456789012345')).to.equal('+123456789012345');
  });

  it('refuses numbers without +, too short or too long, or with other characters', () => {
    for (const text of ['020 7946 0958', '+1234567', '+1234567890123456', '+44 20 7946 0958 ext 2', '++442079460958', '']) {
      expect(e164Of(text), text).to.equal(null);
    }
  });
});
