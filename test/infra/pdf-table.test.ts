import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import * as fontkit from 'fontkit';
import { createRequire } from 'node:module';
import { PdfTable, printable, type PdfColumn } from '../../src/infra/pdf-table.js';
import { pdfPages } from '../support/pdf.js';

const font = fontkit.openSync(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSansCondensed.ttf')) as fontkit.Font;

/** The whole PDF of a table, as bytes. */
async function render(columns: PdfColumn[], rows: string[][], subtitle = ['Filters: none']): Promise<Buffer> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const table = PdfTable.start(sink, { title: 'Quarterly deals', subtitle, columns, sample: rows.slice(0, 1000) });
  await table.addRows(rows);
  await table.end(`${rows.length} rows`);
  return Buffer.concat(chunks);
}

describe('PDF table writer', () => {
  it('prints what the embedded font covers and ? for the rest, never failing on odd text', () => {
    expect(printable('Zoë Łódź Ж א €', font)).to.equal('Zoë Łódź Ж א €');
    // CJK and an emoji the font lacks, a lone surrogate: one ? each. Controls become spaces, CR is dropped, LF kept.
    expect(printable('東京 🦄 \uD800 x', font)).to.equal('?? ? ? x');
    expect(printable('a\tb\u0000c\r\nd', font)).to.equal('a b c\nd');
    // A variation selector and a zero-width joiner print nothing; a decomposed é is composed.
    expect(printable('❤\uFE0F a\u200Db e\u0301', font)).to.equal('❤ ab é');
  });

  it('repeats the header row on every page and keeps every row, in order', async () => {
    const rows = Array.from({ length: 150 }, (_, i) => [`Deal ${String(i).padStart(3, '0')}`, String(1000 + i), i % 7 ? 'Open' : 'Won']);
    const pages = await pdfPages(await render([{ label: 'Deal name', alignRight: false }, { label: 'Amount', alignRight: true }, { label: 'Outcome', alignRight: false }], rows));
    expect(pages.length).to.be.greaterThan(2);
    expect(pages[0].text).to.match(/^Quarterly deals Filters: none/);
    pages.forEach((page, i) => {
      expect(page.text, `page ${i + 1}`).to.contain('Deal name Amount Outcome');
      expect(page.text, `page ${i + 1}`).to.contain(`Page ${i + 1}`);
      expect(page.height, 'three columns fit a portrait page').to.be.greaterThan(page.width);
    });
    const all = pages.map((p) => p.text).join(' ');
    const found = [...all.matchAll(/Deal (\d{3})/g)].map((m) => Number(m[1]));
    expect(found).to.deep.equal(rows.map((_, i) => i));
    expect(pages[pages.length - 1].text).to.match(/150 rows$/);
  });

  it('wraps long cells to three lines ending in an ellipsis, and turns to landscape for many columns', async () => {
    const columns = Array.from({ length: 8 }, (_, i) => ({ label: `Column ${i + 1}`, alignRight: false }));
    const long = 'word '.repeat(2_000);
    const rows = [columns.map((_, i) => (i === 0 ? long : `v${i}`)), columns.map((_, i) => `w${i}`)];
    const [page, ...rest] = await pdfPages(await render(columns, rows));
    expect(rest).to.have.length(0);
    expect(page.width).to.be.greaterThan(page.height);
    expect(page.text).to.contain('Column 1 Column 2 Column 3 Column 4 Column 5 Column 6 Column 7 Column 8');
    expect(page.text).to.match(/ wo?r?d?…/);
    expect(page.text.split('word').length - 1, 'three lines of a narrow column, not two thousand words').to.be.within(6, 60);
    expect(page.text).to.contain('v1 v2 v3 v4 v5 v6 v7');
    expect(page.text).to.contain('w0 w1 w2 w3 w4 w5 w6 w7');
  });

  it('writes right-to-left and CJK text, emoji and lone surrogates without failing', async () => {
    const odd = ['مرحبا', 'שלום', '東京タワー', '🦄🚀', '\uDFFF\uD800', 'Zoë 😀'];
    const pages = await pdfPages(await render([{ label: 'Name 東京', alignRight: false }], odd.map((v) => [v]), ['Filters: Name is "Łódź 東京"']));
    expect(pages).to.have.length(1);
    expect(pages[0].text).to.contain('Filters: Name is "Łódź ??"');
    expect(pages[0].text).to.contain('Name ??');
    expect(pages[0].text).to.contain('?????');
    expect(pages[0].text).to.contain('Zoë 😀');
  });
});
