import type { Writable } from 'node:stream';

/**
 * Resolves once `sink` has room for more (at once when it has), rejects once it is gone:
 * a writer that awaits this stops when its reader does (a client that hung up on a
 * download), instead of waiting for a `drain` that never comes or writing on into nothing.
 */
export function roomIn(sink: Writable): Promise<void> {
  if (sink.destroyed || sink.writableEnded) return Promise.reject(new Error('the output stream is closed'));
  if (!sink.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      sink.off('drain', onDrain);
      sink.off('close', onClose);
      sink.off('error', settle);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onClose = () => settle(new Error('the output stream closed before the export ended'));
    sink.on('drain', onDrain);
    sink.on('close', onClose);
    sink.on('error', settle);
  });
}
