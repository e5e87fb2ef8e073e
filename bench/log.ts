/** Progress for the person watching; stdout carries only the final table. */
export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

export const elapsedSeconds = (startedAt: number) => (performance.now() - startedAt) / 1000;
