import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { processLogger } from './log.js';

function sink(isTTY: boolean): { stream: Writable & { isTTY: boolean }; text: () => string } {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        text += chunk.toString();
        done();
      },
    }),
    { isTTY },
  );
  return { stream, text: () => text };
}

describe('processLogger', () => {
  it('writes a line a person reads on a terminal', () => {
    const out = sink(true);
    processLogger('info', out.stream, { NO_COLOR: '1' }).info({ port: 4242 }, 'listening');
    expect(out.text()).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening\n {4}port: 4242\n$/);
  });

  it('writes JSON lines anywhere else', () => {
    const out = sink(false);
    processLogger('info', out.stream, {}).info({ port: 4242 }, 'listening');
    expect(JSON.parse(out.text())).toMatchObject({ level: 30, msg: 'listening', port: 4242 });
  });
});
