import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import { setImmediate as turn } from 'node:timers/promises';
import * as fontkit from 'fontkit';
import PDFDocument from 'pdfkit';
import { roomIn } from './streams.js';

/**
 * A table as a PDF (pdfkit): a title and a few lines under it, then a header row and the
 * rows, the header repeated at the top of every page, pages numbered. Written to a sink as
 * it goes (page by page, waiting for a slow sink), so a long table never sits in memory whole.
 *
 * Text: pdfkit's standard fonts only cover WinAnsi (Latin-1 and a few more), so the table is
 * set in DejaVu Sans Condensed, embedded (subset to the glyphs used). It covers Latin, Greek,
 * Cyrillic and many symbols; a character it has no glyph for (CJK, emoji, a lone surrogate)
 * is printed as `?` rather than as an invisible box, and control characters as spaces.
 */

const require = createRequire(import.meta.url);
const fontData = (name: string) => readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${name}.ttf`));

interface Face {
  data: Buffer;
  font: fontkit.Font;
}
let faces: { regular: Face; bold: Face } | null = null;
/** The two faces, read once per process (about 0.7 MB each). */
function loadFaces() {
  if (!faces) {
    const face = (name: string): Face => {
      const data = fontData(name);
      return { data, font: fontkit.create(data) as fontkit.Font };
    };
    faces = { regular: face('DejaVuSansCondensed'), bold: face('DejaVuSansCondensed-Bold') };
  }
  return faces;
}

/** Variation selectors, zero-width joiners and marks, BOM: they shape a glyph, they print nothing. */
const ignorable = (cp: number) => (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp === 0xfeff || (cp >= 0xe0100 && cp <= 0xe01ef);

/** `text` as the font can print it: NFC, line breaks kept, other controls as spaces, the rest as `?` where the font has no glyph. */
export function printable(text: string, font: fontkit.Font): string {
  let out = '';
  for (const ch of text.normalize('NFC')) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0x0a) out += '\n';
    else if (cp === 0x0d) continue;
    else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp === 0x2028 || cp === 0x2029) out += ' ';
    else if (ignorable(cp)) continue;
    else out += font.hasGlyphForCodePoint(cp) ? ch : '?';
  }
  return out;
}

export interface PdfColumn {
  label: string;
  /** Right-aligned (numbers). */
  alignRight: boolean;
}

export interface PdfTableOptions {
  title: string;
  /** Lines under the title (filters, when it was made). */
  subtitle: string[];
  columns: PdfColumn[];
  /** The first rows, to size the columns by (all of them are still to be added). */
  sample: string[][];
}

const MARGIN = 36;
const FONT_SIZE = 8;
const PAD_X = 4;
const PAD_Y = 3;
/** A cell shows at most this many lines, the last ending in an ellipsis when the text goes on. */
const MAX_LINES = 3;
/** Text past this is never laid out (three lines of the widest column hold far less). */
const MAX_CHARS = 600;
const MIN_COLUMN = 36;
/** A column asks for no more than this (longer text wraps), so one long value does not take the page. */
const MAX_COLUMN = 200;
const FOOTER = 14;
/** Rows laid out between two turns of the event loop (about 10–20 ms of work). */
const ROWS_PER_TURN = 50;
const A4: [number, number] = [595.28, 841.89];

/**
 * Each column's width: its natural width (the widest of header and sample, padded) when all
 * fit; else the widest are cut to one level so the total fits the page, none below a minimum.
 * Any room left is shared out in proportion.
 */
function columnWidths(natural: number[], available: number): number[] {
  const floor = Math.min(MIN_COLUMN, available / natural.length);
  const wanted = natural.map((w) => Math.max(w, floor));
  const total = wanted.reduce((s, w) => s + w, 0);
  if (total <= available) return wanted.map((w) => (w / total) * available);
  // The level L with Σ min(w, L) = available.
  const sorted = [...wanted].sort((a, b) => a - b);
  let rest = available;
  let level = floor;
  for (let i = 0; i < sorted.length; i++) {
    const share = rest / (sorted.length - i);
    if (sorted[i] >= share) {
      level = share;
      break;
    }
    rest -= sorted[i];
  }
  return wanted.map((w) => Math.min(w, level));
}

export class PdfTable {
  private readonly doc: PDFKit.PDFDocument;
  private readonly widths: number[];
  private readonly regular: fontkit.Font;
  private readonly bold: fontkit.Font;
  private readonly ended: Promise<unknown>;
  private readonly pageOptions: PDFKit.PDFDocumentOptions;
  private readonly line: number;
  private readonly tableWidth: number;
  private y = 0;
  private page = 0;
  private striped = false;

  private constructor(private readonly sink: Writable, private readonly options: PdfTableOptions) {
    const { regular, bold } = loadFaces();
    this.regular = regular.font;
    this.bold = bold.font;
    this.doc = new PDFDocument({ autoFirstPage: false, info: { Title: printable(options.title, this.regular), Creator: 'CRM report export' } });
    this.doc.registerFont('cell', regular.data);
    this.doc.registerFont('head', bold.data);
    this.line = this.doc.font('cell', FONT_SIZE).currentLineHeight();
    // Natural widths, before the first page: the page's orientation follows from them.
    const natural = options.columns.map((c, i) => {
      this.doc.font('head', FONT_SIZE);
      let widest = this.doc.widthOfString(this.cellText(c.label, this.bold));
      this.doc.font('cell', FONT_SIZE);
      for (const row of options.sample) widest = Math.max(widest, ...this.cellText(row[i] ?? '', this.regular).split('\n').map((l) => this.doc.widthOfString(l)));
      return Math.min(widest + 2 * PAD_X + 1, MAX_COLUMN);
    });
    const portrait = A4[0] - 2 * MARGIN;
    const landscape = options.columns.length > 6 || (options.columns.length > 3 && natural.reduce((s, w) => s + w, 0) > portrait);
    this.pageOptions = { size: 'A4', layout: landscape ? 'landscape' : 'portrait', margins: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN } };
    this.widths = columnWidths(natural, (landscape ? A4[1] : A4[0]) - 2 * MARGIN);
    this.tableWidth = this.widths.reduce((s, w) => s + w, 0);
    this.doc.on('data', (chunk: Buffer) => sink.write(chunk));
    this.ended = once(this.doc, 'end');
  }

  /** Starts the document (title, subtitle, header row) on `sink`. */
  static start(sink: Writable, options: PdfTableOptions): PdfTable {
    const table = new PdfTable(sink, options);
    table.newPage(true);
    return table;
  }

  /** What a cell prints: no more than MAX_CHARS, no blank lines. */
  private cellText(value: string, font: fontkit.Font): string {
    return printable(value.length > MAX_CHARS ? value.slice(0, MAX_CHARS) : value, font).replace(/\n{2,}/g, '\n').trim();
  }

  private get bottom(): number {
    return this.doc.page.height - MARGIN - FOOTER;
  }

  private newPage(first = false): void {
    const doc = this.doc;
    doc.addPage(this.pageOptions);
    this.page += 1;
    this.striped = false;
    const left = MARGIN;
    const width = doc.page.width - 2 * MARGIN;
    this.y = MARGIN;
    if (first) {
      doc.font('head', 14).fillColor('#000000');
      const title = printable(this.options.title, this.bold);
      doc.text(title, left, this.y, { width, height: 14 * 1.2 * 2, ellipsis: true });
      this.y = doc.y + 4;
      doc.font('cell', 9).fillColor('#333333');
      for (const line of this.options.subtitle) {
        doc.text(printable(line, this.regular), left, this.y, { width, height: 9 * 1.2 * 4, ellipsis: true });
        this.y = doc.y + 2;
      }
      this.y += 8;
    }
    this.footer();
    this.headerRow();
  }

  /** The page number and title at the foot of the page (below the bottom margin, so it must not start a page). */
  private footer(): void {
    const doc = this.doc;
    const margin = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc.font('cell', 7).fillColor('#666666');
    const y = doc.page.height - MARGIN - 8;
    const width = doc.page.width - 2 * MARGIN;
    doc.text(printable(this.options.title, this.regular).replace(/\n/g, ' '), MARGIN, y, { width: width - 60, height: 9, ellipsis: true, lineBreak: false });
    doc.text(`Page ${this.page}`, MARGIN + width - 60, y, { width: 60, align: 'right', lineBreak: false });
    doc.page.margins.bottom = margin;
  }

  private headerRow(): void {
    const labels = this.options.columns.map((c) => this.cellText(c.label, this.bold));
    this.doc.font('head', FONT_SIZE);
    const height = this.rowHeight(labels);
    this.doc.rect(MARGIN, this.y, this.tableWidth, height).fill('#dde3ea');
    this.drawCells(labels, height);
    this.y += height;
    this.doc.moveTo(MARGIN, this.y).lineTo(MARGIN + this.tableWidth, this.y).lineWidth(0.5).stroke('#8a96a3');
    this.doc.font('cell', FONT_SIZE);
  }

  /** Lines a cell needs (at most MAX_LINES): one when it fits, else as pdfkit wraps it. */
  private rowHeight(cells: string[]): number {
    let lines = 1;
    cells.forEach((text, i) => {
      if (!text) return;
      const width = this.widths[i] - 2 * PAD_X;
      if (!text.includes('\n') && this.doc.widthOfString(text) <= width) return;
      lines = Math.max(lines, Math.min(MAX_LINES, Math.round(this.doc.heightOfString(text, { width, lineGap: 0 }) / this.line)));
    });
    return lines * this.line + 2 * PAD_Y;
  }

  private drawCells(cells: string[], height: number): void {
    let x = MARGIN;
    this.doc.fillColor('#000000');
    cells.forEach((text, i) => {
      const width = this.widths[i] - 2 * PAD_X;
      if (text) {
        // The half point spare keeps rounding from dropping the last line.
        this.doc.text(text, x + PAD_X, this.y + PAD_Y, { width, height: height - 2 * PAD_Y + 0.5, lineGap: 0, ellipsis: true, align: this.options.columns[i].alignRight ? 'right' : 'left' });
      }
      x += this.widths[i];
    });
  }

  /** Adds rows, giving the event loop a turn every few dozen (laying text out is CPU work); resolves once the sink has room for more. */
  async addRows(rows: string[][]): Promise<void> {
    for (let i = 0; i < rows.length; i++) {
      this.addRow(rows[i]);
      if (i % ROWS_PER_TURN === ROWS_PER_TURN - 1) await turn();
    }
    await roomIn(this.sink);
  }

  private addRow(row: string[]): void {
    const cells = this.options.columns.map((_c, i) => this.cellText(row[i] ?? '', this.regular));
    const height = this.rowHeight(cells);
    if (this.y + height > this.bottom) this.newPage();
    if (this.striped) this.doc.rect(MARGIN, this.y, this.tableWidth, height).fill('#f3f5f7');
    this.striped = !this.striped;
    this.drawCells(cells, height);
    this.y += height;
  }

  /** A closing line under the table (a row count), then the document's end; resolves once the sink is ended. */
  async end(note: string): Promise<void> {
    const doc = this.doc;
    if (this.y + 9 * 1.2 + 6 > this.bottom) this.newPage();
    doc.font('cell', 9).fillColor('#333333').text(printable(note, this.regular), MARGIN, this.y + 6, { width: doc.page.width - 2 * MARGIN });
    doc.end();
    await this.ended;
    this.sink.end();
  }
}
