import { Keyring } from '../shared/crypto/keyring.js';
import type { KeySource } from '../shared/crypto/key-source.js';
import { startSimulator, type RunningSimulator } from './index.js';
import type { FromChild, ToChild } from './process.js';

/**
 * Entry point of the embedded simulator's own process (simulator/process.ts starts it). It runs
 * what the parent asks over the IPC channel and nothing else.
 */

// The parent stops it after the server has drained, since requests in flight may still call the
// processor: a signal sent to the whole process group (Ctrl-C in a terminal, systemd's stop) must not
// end it first. It still never outlives its parent: the channel closing ends it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);

const send = (message: FromChild): void => {
  if (process.connected) process.send?.(message);
};

let running: RunningSimulator | undefined;
let stopping: Promise<void> | undefined;

function stop(): Promise<void> {
  stopping ??= (async () => {
    await running?.close();
    if (process.connected) process.disconnect();
  })();
  return stopping;
}

/** A key source through the channel arrives with its Buffers as plain byte arrays. */
function keySourceFrom(source: KeySource): KeySource {
  return source.kind === 'env' ? { kind: 'env', keys: source.keys.map((key) => Buffer.from(key)) } : source;
}

process.on('message', (message: ToChild) => {
  if (message.type === 'close') {
    void stop();
    return;
  }
  const { keySource, forwardLog, ...settings } = message.settings;
  startSimulator({
    ...settings,
    keyring: new Keyring(keySourceFrom(keySource)),
    ...(forwardLog ? { logger: (line: string) => send({ type: 'log', line }) } : {}),
    onLooseFile: (found) => send({ type: 'loose', found }),
  }).then(
    (sim) => {
      running = sim;
      send({ type: 'listening', url: sim.url, host: sim.host, port: sim.port, keys: sim.keys });
    },
    (err: unknown) => {
      const e: NodeJS.ErrnoException = err instanceof Error ? err : new Error(String(err));
      send({ type: 'failed', name: e.name, message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) });
      if (process.connected) process.disconnect();
    },
  );
});

process.on('disconnect', () => void stop());
