import type { CliIo } from './io.js';

/** A one-line spinner on stderr while the CLI waits; silent when stderr is not a terminal. */
export interface Spinner {
  update(text: string): void;
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** 80 ms a frame: the usual rate of terminal spinners, smooth without flooding slow terminals. */
const FRAME_MS = 80;

export function startSpinner(text: string, stream: CliIo['stderr']): Spinner {
  if (!stream.isTTY) return { update() {}, stop() {} };
  let frame = 0;
  let current = text;
  const draw = () => stream.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${current}`);
  draw();
  const timer = setInterval(draw, FRAME_MS);
  return {
    update(next) {
      current = next;
      draw();
    },
    stop() {
      clearInterval(timer);
      stream.write('\r\x1b[2K');
    },
  };
}
