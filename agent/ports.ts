import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import WebSocket from 'ws';
import { SerialPort } from 'serialport';
import type { Clock } from '../shared/time.js';

/**
 * The agent's I/O, behind small ports so tests can swap in a pty pair, a port-0 server or a fake
 * clock. The real implementations are below; nothing else in agent/ touches ws or serialport.
 */

/** One upstream connection: text frames in and out. */
export interface UpstreamSocket {
  send(text: string): void;
  close(code?: number, reason?: string): void;
  onOpen(listener: () => void): void;
  onMessage(listener: (text: string) => void): void;
  /** Called once, whether the socket closed cleanly, failed to open or broke. */
  onClose(listener: (code: number, reason: string) => void): void;
}

export interface UpstreamTransport {
  connect(url: string, headers: Record<string, string>): UpstreamSocket;
}

/** A device link (serial port or TCP socket) as a driver sees it: commands are its business, bytes are the link's. */
export interface SerialConnection {
  write(data: string | Uint8Array): void;
  onData(listener: (chunk: Buffer) => void): void;
  /** Called once when the device goes away (unplugged, EIO) or the port is closed. */
  onClose(listener: (err?: Error) => void): void;
  close(): Promise<void>;
}

export interface SerialPortInfo {
  path: string;
  vendorId?: string | undefined;
  productId?: string | undefined;
  serialNumber?: string | undefined;
}

export interface SerialBinding {
  list(): Promise<SerialPortInfo[]>;
  exists(path: string): boolean;
  open(path: string, baudRate: number): Promise<SerialConnection>;
}

/** Network printers (a raw TCP port, 9100 by convention). */
export interface TcpBinding {
  open(host: string, port: number): Promise<SerialConnection>;
}

export interface AgentPorts {
  clock: Clock;
  upstream: UpstreamTransport;
  serial: SerialBinding;
  tcp: TcpBinding;
}

/** A network printer that does not answer a connect in 2 s is off or unplugged; polls retry it. */
const TCP_CONNECT_TIMEOUT_MS = 2_000;

export const nodeTcpBinding: TcpBinding = {
  open(host, port) {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port, timeout: TCP_CONNECT_TIMEOUT_MS });
      const closeListeners: ((err?: Error) => void)[] = [];
      let closed = false;
      let lastError: Error | undefined;
      const fire = () => {
        if (closed) return;
        closed = true;
        for (const l of closeListeners) l(lastError);
      };
      socket.once('timeout', () => socket.destroy(new Error(`no answer from ${host}:${port} within ${TCP_CONNECT_TIMEOUT_MS} ms`)));
      socket.on('error', (err) => {
        lastError = err;
      });
      socket.once('close', fire);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        socket.setTimeout(0);
        socket.setNoDelay(true);
        resolve({
          write: (data) => {
            if (!socket.destroyed) socket.write(data);
          },
          onData: (l) => socket.on('data', l),
          onClose: (l) => closeListeners.push(l),
          close: () =>
            new Promise<void>((done) => {
              if (socket.destroyed) return done();
              socket.once('close', () => done());
              socket.end();
              setTimeout(() => socket.destroy(), TCP_CONNECT_TIMEOUT_MS).unref();
            }),
        });
      });
    });
  },
};

/** Pings the server at this interval so a half-open TCP connection is noticed. */
const WS_PING_MS = 15_000;

export const wsTransport: UpstreamTransport = {
  connect(url, headers) {
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000 });
    let closed = false;
    const closeListeners: ((code: number, reason: string) => void)[] = [];
    const fireClose = (code: number, reason: string) => {
      if (closed) return;
      closed = true;
      clearInterval(pinger);
      for (const l of closeListeners) l(code, reason);
    };
    const pinger = setInterval(() => {
      if (ws.readyState === ws.OPEN) ws.ping();
    }, WS_PING_MS);
    pinger.unref();
    ws.on('close', (code, reason) => fireClose(code, reason.toString()));
    ws.on('error', (err) => {
      fireClose(1006, err.message);
      ws.terminate();
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => {
        fireClose(4000 + (res.statusCode ?? 0) % 1000, `HTTP ${res.statusCode ?? '?'}: ${body.slice(0, 300)}`);
        ws.terminate();
      });
    });
    return {
      send: (text) => {
        if (ws.readyState === ws.OPEN) ws.send(text);
      },
      close: (code, reason) => (ws.readyState === ws.CONNECTING ? ws.terminate() : ws.close(code, reason)),
      onOpen: (l) => ws.on('open', l),
      onMessage: (l) => ws.on('message', (data, isBinary) => (isBinary ? undefined : l(data.toString()))),
      onClose: (l) => closeListeners.push(l),
    };
  },
};

export const nodeSerialBinding: SerialBinding = {
  async list() {
    return (await SerialPort.list()).map((p) => ({ path: p.path, vendorId: p.vendorId, productId: p.productId, serialNumber: p.serialNumber }));
  },
  exists: (path) => existsSync(path),
  open(path, baudRate) {
    return new Promise((resolve, reject) => {
      const port = new SerialPort({ path, baudRate, autoOpen: false });
      port.open((err) => {
        if (err) return reject(err);
        let closed = false;
        const closeListeners: ((err?: Error) => void)[] = [];
        const fire = (e?: Error) => {
          if (closed) return;
          closed = true;
          for (const l of closeListeners) l(e);
        };
        port.on('close', (e?: Error) => fire(e ?? undefined));
        port.on('error', (e: Error) => {
          fire(e);
          if (port.isOpen) port.close(() => undefined);
        });
        resolve({
          write: (data) => {
            if (port.isOpen) port.write(typeof data === 'string' ? data : Buffer.from(data));
          },
          onData: (l) => port.on('data', l),
          onClose: (l) => closeListeners.push(l),
          close: () =>
            new Promise<void>((done) => {
              if (!port.isOpen) return done();
              port.close(() => done());
            }),
        });
      });
    });
  },
};
