import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { EscPosDecoder, type ScriptedStatus, statusReply } from './escpos.js';
import { eventually } from './tmp.js';

/** A serial line for a counter device: a socat pty pair, the agent on one end and the test's device on the other. */
export class Pty {
  #socat: ChildProcess | undefined;
  constructor(
    readonly agentEnd: string,
    readonly deviceEnd: string,
  ) {}

  async plug(): Promise<void> {
    this.#socat = spawn('socat', [`pty,raw,echo=0,link=${this.agentEnd}`, `pty,raw,echo=0,link=${this.deviceEnd}`], { stdio: 'ignore' });
    await eventually(() => (existsSync(this.agentEnd) && existsSync(this.deviceEnd) ? true : undefined), 5_000);
  }

  async unplug(): Promise<void> {
    const s = this.#socat;
    this.#socat = undefined;
    if (!s || s.exitCode !== null) return;
    const exited = new Promise((r) => s.once('exit', r));
    s.kill('SIGTERM');
    await exited;
  }
}

/** The test's printer: decodes what it is sent and answers status requests as scripted. */
export class PrinterEmulator {
  readonly decoder = new EscPosDecoder();
  status: ScriptedStatus = { answering: true, offline: false, paperOut: false, coverOpen: false, drawerOpen: false };
  #reply: (byte: number) => void = () => undefined;

  constructor() {
    this.decoder.onStatusRequest = (n) => {
      if (this.status.answering) this.#reply(statusReply(n, this.status));
    };
  }

  attach(write: (bytes: Uint8Array) => void): (chunk: Uint8Array) => void {
    this.#reply = (byte) => write(Uint8Array.of(byte));
    return (chunk) => this.decoder.feed(chunk);
  }

  /** The receipts printed from event index `from`: each is the text lines up to its cut, with its QR data. */
  receipts(from = 0): { lines: string[]; qr: string | null }[] {
    const out: { lines: string[]; qr: string | null }[] = [];
    let lines: string[] = [];
    let qr: string | null = null;
    for (const e of this.decoder.events.slice(from)) {
      if (e.type === 'text') lines.push(e.line.trimEnd());
      if (e.type === 'qr_store') qr = e.data;
      if (e.type === 'cut') {
        out.push({ lines, qr });
        lines = [];
        qr = null;
      }
    }
    return out;
  }

  get mark(): number {
    return this.decoder.events.length;
  }
}
