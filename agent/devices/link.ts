import type { Logger } from 'pino';
import type { SerialBinding, SerialConnection, TcpBinding } from '../ports.js';

/**
 * How the agent reaches a counter device: a serial device path, a USB serial adapter by its
 * vendor and product id (resolved to its path on every look, so it may move between ttyUSB0 and
 * ttyUSB1), or a raw TCP port (network receipt printers listen on 9100).
 */
export type DeviceTarget =
  | { kind: 'path'; path: string }
  | { kind: 'usb'; vendorId: string; productId: string }
  | { kind: 'tcp'; host: string; port: number };

export function parseDeviceSpec(spec: string): DeviceTarget {
  const usb = /^usb:([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$/.exec(spec);
  if (usb) return { kind: 'usb', vendorId: usb[1]!.toLowerCase(), productId: usb[2]!.toLowerCase() };
  const tcp = /^tcp:(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(spec);
  if (tcp) return { kind: 'tcp', host: tcp[1]!.replace(/^\[|\]$/g, ''), port: Number(tcp[2]) };
  return { kind: 'path', path: spec };
}

export function describeTarget(target: DeviceTarget): string {
  switch (target.kind) {
    case 'path':
      return target.path;
    case 'usb':
      return `usb:${target.vendorId}:${target.productId}`;
    case 'tcp':
      return `tcp:${target.host}:${target.port}`;
  }
}

/**
 * Ports are looked for this often. Half a second keeps plug and unplug well inside the 2 s we
 * promise, and a directory check, a USB enumeration or a TCP connect attempt twice a second is nothing.
 */
export const PLUG_POLL_MS = 500;

export interface LinkPorts {
  serial: SerialBinding;
  tcp: TcpBinding;
  logger: Logger;
}

/**
 * One device's connection, kept open: looked for every PLUG_POLL_MS, opened when it appears,
 * dropped when its path vanishes or the link breaks. The device's own driver decides what its
 * bytes mean.
 */
export class DeviceLink {
  #conn: SerialConnection | undefined;
  #path: string | undefined;
  #opening = false;
  #timer: NodeJS.Timeout | undefined;
  #lastError: string | null = null;

  constructor(
    private readonly ports: LinkPorts,
    readonly target: DeviceTarget,
    private readonly baudRate: number,
    private readonly events: { opened(conn: SerialConnection): void; closed(why: string): void; tick(): void },
  ) {}

  get connection(): SerialConnection | undefined {
    return this.#conn;
  }

  get lastError(): string | null {
    return this.#lastError;
  }

  start(): void {
    // The timer first: a look finds the link stopped while it is unset, and the first look is now.
    this.#timer = setInterval(() => void this.#look(), PLUG_POLL_MS);
    void this.#look();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const conn = this.#conn;
    this.#conn = undefined;
    await conn?.close().catch(() => undefined);
  }

  async #resolvePath(): Promise<string | undefined> {
    const t = this.target;
    if (t.kind === 'path') return this.ports.serial.exists(t.path) ? t.path : undefined;
    if (t.kind === 'usb') {
      try {
        return (await this.ports.serial.list()).find((p) => p.vendorId?.toLowerCase() === t.vendorId && p.productId?.toLowerCase() === t.productId)?.path;
      } catch (err) {
        this.ports.logger.warn({ err }, 'could not list serial ports');
        return undefined;
      }
    }
    return undefined;
  }

  async #look(): Promise<void> {
    if (this.#opening || this.#timer === undefined) return;
    this.#opening = true;
    try {
      if (this.#conn) {
        // A serial device whose path vanished was unplugged, even if the port has not errored yet.
        if (this.target.kind !== 'tcp' && (await this.#resolvePath()) !== this.#path) this.#drop('unplugged');
        else this.events.tick();
        return;
      }
      let conn: SerialConnection;
      if (this.target.kind === 'tcp') {
        conn = await this.ports.tcp.open(this.target.host, this.target.port);
      } else {
        const path = await this.#resolvePath();
        if (!path) {
          this.#lastError = 'not connected';
          return;
        }
        conn = await this.ports.serial.open(path, this.baudRate);
        this.#path = path;
      }
      if (this.#timer === undefined) {
        await conn.close();
        return;
      }
      this.#conn = conn;
      this.#lastError = null;
      conn.onClose((err) => {
        if (this.#conn === conn) this.#drop(err ? err.message : 'closed');
      });
      this.ports.logger.info({ device: describeTarget(this.target) }, 'device connected');
      this.events.opened(conn);
    } catch (err) {
      this.#lastError = err instanceof Error ? err.message : String(err);
    } finally {
      this.#opening = false;
    }
  }

  #drop(why: string): void {
    const conn = this.#conn;
    this.#conn = undefined;
    this.#path = undefined;
    this.#lastError = why;
    void conn?.close().catch(() => undefined);
    this.ports.logger.info({ device: describeTarget(this.target), why }, 'device gone');
    this.events.closed(why);
  }
}
