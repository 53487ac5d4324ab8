import type { DeviceState } from '../../shared/agent-protocol.js';
import type { AgentUpMessage, UpstreamDevice } from '../../shared/agent-upstream.js';

/**
 * Device changes come in bursts (a print job moves `queued` up and down, a cable pulled takes the
 * printer's status and its connection at once): the list goes upstream once the burst has had this
 * long to settle. 200 ms keeps an unplug on the server well inside the 2 s it takes the agent to
 * notice it (a 500 ms look at the port, a 1 s wait for the printer's answer).
 */
export const DEVICE_REPORT_COALESCE_MS = 200;

/** The server stores at most these lengths (shared/agent-upstream.ts); longer words are cut, never refused. */
const MAX_TARGET = 300;
const MAX_ERROR = 500;

/** A device as the server is told of it: the local state without `last_seen_at`, which the server keeps by its own clock. */
export function upstreamDevice(device: DeviceState): UpstreamDevice {
  return {
    id: device.id,
    kind: device.kind,
    target: device.target.slice(0, MAX_TARGET),
    status: device.status,
    last_error: device.last_error === null ? null : device.last_error.slice(0, MAX_ERROR),
    paper: device.paper,
    cover_open: device.cover_open,
    drawer_open: device.drawer_open,
    queued: device.queued,
  };
}

/**
 * Tells the server of the counter devices (docs/agent-protocol.md, `devices`): the whole list after
 * each welcome, then again after a change, once its burst settled, and only when it differs from
 * what the server has. The printer's status is asked twice a second and its `last_seen_at` moves
 * each time; that is not a change here, so an idle counter sends nothing.
 */
export class DeviceReports {
  #timer: NodeJS.Timeout | undefined;
  #sent: string | undefined;

  constructor(
    private readonly devices: () => DeviceState[],
    /** Sends upstream; false while the link is down (the next welcome sends the list). */
    private readonly send: (message: AgentUpMessage & { type: 'devices' }) => boolean,
    private readonly coalesceMs = DEVICE_REPORT_COALESCE_MS,
  ) {}

  /** The link is up (again): the server is told the whole list now, whatever it was told before. */
  welcome(): void {
    this.#sent = undefined;
    this.#flush();
  }

  /** A device changed. */
  changed(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flush();
    }, this.coalesceMs);
    this.#timer.unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const devices = this.devices().map(upstreamDevice);
    const text = JSON.stringify(devices);
    if (text === this.#sent) return;
    if (this.send({ type: 'devices', devices })) this.#sent = text;
  }
}
