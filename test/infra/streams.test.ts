import { Writable } from 'node:stream';
import { expect } from 'chai';
import { roomIn } from '../../src/infra/streams.js';

/** A sink that takes one byte and then holds its callback until `release`. */
function slowSink() {
  let release = () => {};
  const sink = new Writable({
    highWaterMark: 1,
    write(_chunk, _encoding, callback) {
      release = () => callback();
    },
  });
  return { sink, release: () => release() };
}

describe('roomIn (backpressure for exports)', () => {
  it('resolves at once while the sink has room, and on drain once it had none', async () => {
    const { sink, release } = slowSink();
    await roomIn(sink);
    sink.write('abc');
    let settled = false;
    const waiting = roomIn(sink).then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).to.equal(false);
    release();
    await waiting;
    expect(settled).to.equal(true);
  });

  it('rejects when the sink is closed while waiting (a client that hung up), or already was', async () => {
    const { sink } = slowSink();
    sink.write('abc');
    const waiting = roomIn(sink);
    sink.destroy();
    let error: unknown;
    await waiting.catch((e) => (error = e));
    expect(String(error)).to.match(/closed before the export ended/);
    let again: unknown;
    await roomIn(sink).catch((e) => (again = e));
    expect(String(again)).to.match(/closed/);
  });
});
