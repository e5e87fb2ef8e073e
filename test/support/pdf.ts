import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface PdfPage {
  /** The page's text items in order, joined by spaces (a wrapped cell's lines are items of their own). */
  text: string;
  width: number;
  height: number;
}

/** A PDF read back by pdf.js (Mozilla's reader): each page's text and size in points. */
export async function pdfPages(bytes: Uint8Array): Promise<PdfPage[]> {
  const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false, verbosity: 0 }).promise;
  try {
    const pages: PdfPage[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      const [x0, y0, x1, y1] = page.view;
      const text = content.items.map((item) => ('str' in item ? item.str : '')).filter((s) => s.trim()).join(' ');
      pages.push({ text, width: Math.round(x1 - x0), height: Math.round(y1 - y0) });
    }
    return pages;
  } finally {
    await doc.destroy();
  }
}
