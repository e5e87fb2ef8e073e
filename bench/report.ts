import fs from 'node:fs';

export interface Figure {
  /** Stable name for the JSON file. */
  key: string;
  label: string;
  value: number;
  decimals: number;
  unit: string;
  notes?: string;
  /** A lower bound from the design doc; a figure without one is for reference only. */
  atLeast?: number;
  /** An upper bound from the design doc (the value must stay under it). */
  below?: number;
  /** Shown in the target column when there is no bound. */
  targetText?: string;
}

const formatNumber = (value: number, decimals: number) =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
    : String(value);

/** Whether the figure meets its bound; null without one. */
function met(figure: Figure): boolean | null {
  if (figure.atLeast !== undefined) return figure.value >= figure.atLeast;
  if (figure.below !== undefined) return figure.value < figure.below;
  return null;
}

function targetCell(figure: Figure): string {
  const verdict = met(figure);
  if (verdict === null) return figure.targetText ?? '-';
  const bound = figure.atLeast !== undefined ? `>= ${formatNumber(figure.atLeast, 0)}` : `< ${formatNumber(figure.below!, 0)}`;
  return `${bound} ${figure.unit}: ${verdict ? 'met' : 'MISSED'}`;
}

/** Plain text, one line per figure, columns padded to their widest cell; value right-aligned. */
export function formatTable(figures: Figure[]): string {
  const header = ['figure', 'value', 'unit / notes', 'target'];
  const rows = figures.map((f) => [
    f.label,
    formatNumber(f.value, f.decimals),
    f.notes ? `${f.unit}; ${f.notes}` : f.unit,
    targetCell(f),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 1 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join(' | ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n') + '\n';
}

export function writeJson(file: URL, content: { figures: Figure[] } & Record<string, unknown>): void {
  const figures = Object.fromEntries(
    content.figures.map((f) => [
      f.key,
      {
        label: f.label,
        value: Number(f.value.toFixed(f.decimals)),
        unit: f.unit,
        notes: f.notes ?? null,
        target: f.atLeast ?? null,
        ...(f.below === undefined ? {} : { below: f.below }),
        met: met(f),
      },
    ]),
  );
  fs.writeFileSync(file, JSON.stringify({ ...content, figures }, null, 2) + '\n');
}
