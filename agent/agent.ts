import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pino, { type Logger } from 'pino';
import { PROTOCOL_VERSION, TransactionSummarySchema, type AgentMessage, type ReaderState } from '../shared/agent-protocol.js';
import {
  MAX_DRAWER_OPENINGS_PER_MESSAGE,
  UPSTREAM_PROTOCOL_VERSION,
  type AgentUpMessage,
  type DrawerOpening,
  type ServerDownMessage,
} from '../shared/agent-upstream.js';
import { PosApi } from '../shared/api/client.js';
import { ApiRequestError } from '../shared/api/errors.js';
import type { AgentConfig } from '../shared/config.js';
import { warnLooseFiles } from '../shared/files.js';
import { systemClock } from '../shared/time.js';
import { LocalServer, type Command } from './local-server.js';
import { nodeSerialBinding, nodeTcpBinding, wsTransport, type AgentPorts } from './ports.js';
import { ReaderBook, refOf } from './readers.js';
import { POS_VERSION } from '../shared/version.js';
import { AgentState } from './state.js';
import { OfflineSales } from './offline-sales.js';
import { ProcessorDriver } from './drivers/processor.js';
import { SimulatedDriver } from './drivers/simulated.js';
import type { DriverContext, ReaderDriver } from './drivers/types.js';
import { UpstreamLink } from './upstream.js';
import { CounterDevices } from './devices/counter.js';
import { DeviceReports } from './devices/upstream-report.js';
import { ReceiptPolicies } from './receipt-policy.js';

/** The agent is released with pos: its hello names the version of the package it runs from. */
export const AGENT_VERSION = POS_VERSION;

/** While the server is unreachable at start-up, the drivers' first pass is retried this often. */
const DRIVER_RETRY_MS = 2_000;

export interface RunningAgent {
  agentId: string;
  /** The local websocket, e.g. ws://127.0.0.1:4848. */
  url: string;
  logger: Logger;
  close(): Promise<void>;
}

export interface AgentOptions {
  ports?: Partial<AgentPorts>;
  logger?: Logger;
}

/** The agent's own refusals take the API's error shape, so the counter shows them like the server's. */
function fail(status: number, type: string, code: string, message: string): ApiRequestError {
  return new ApiRequestError(status, { type, code, message });
}

/** Starts the on-premise agent: drivers, the upstream link, the local websocket. */
export async function startAgent(config: AgentConfig, options: AgentOptions = {}): Promise<RunningAgent> {
  const logger = options.logger ?? pino({ level: config.logLevel });
  const ports: AgentPorts = { clock: systemClock, upstream: wsTransport, serial: nodeSerialBinding, tcp: nodeTcpBinding, ...options.ports };
  const state = await AgentState.open(config.dataDir, warnLooseFiles(logger));
  const agentId = state.data.agent_id;
  const mode = config.apiKey.includes('_live_') ? 'live' : 'test';
  const api = new PosApi({ server: config.serverUrl, apiKey: config.apiKey });
  let local: LocalServer | undefined;
  let link: UpstreamLink | undefined;

  const offlineMessage = (): AgentMessage => ({ type: 'offline', ...offline.summary(), limit: offline.limitReached() });
  const offline = new OfflineSales(state.db, agentId, ports.clock, api, logger, () => local?.broadcast(null, offlineMessage()));
  const syncOffline = () => {
    if (link?.connected && offline.summary().waiting > 0) void offline.sync();
  };
  const counter = new CounterDevices(config, {
    api,
    state,
    clock: ports.clock,
    logger,
    serial: ports.serial,
    tcp: ports.tcp,
    agentId,
    agentMode: mode,
    offline,
    online: () => link?.connected ?? false,
    till: (reader) => {
      const keys = reader === undefined ? book.keys() : [book.find(reader)].filter((k): k is string => k !== undefined);
      if (reader !== undefined && !keys.length) throw fail(404, 'invalid_request_error', 'resource_missing', `This agent follows no reader ${reader}`);
      const infos = keys.map((k) => book.info(k)).filter((i) => i !== undefined);
      if (reader !== undefined) {
        const info = infos[0];
        if (info && /^[0-9a-f-]{36}$/.test(info.id ?? '')) return { terminal_id: info.id! };
        return info?.location_id ? { location_id: info.location_id } : {};
      }
      // No reader named: a till whose readers all stand at one location sells there.
      const locations = new Set(infos.map((i) => i.location_id ?? null));
      const only = locations.size === 1 ? [...locations][0] : null;
      return only ? { location_id: only } : {};
    },
    changed: (device) => {
      local?.broadcast('devices', { type: 'device', device });
      deviceReports.changed();
    },
    // Kept on disk until the server acknowledges it, so an opening while the server is out of reach
    // still reaches the audit trail. The drawer is open either way: a failure here is logged, not thrown.
    drawerOpened: async (opening) => {
      const full: DrawerOpening = { id: randomUUID(), ...opening, opened_at: ports.clock.now() };
      try {
        await state.enqueueDrawerOpening(full);
      } catch (err) {
        logger.error({ err, opening: full }, 'could not keep a drawer opening for the audit trail');
      }
      link?.send({ type: 'drawer_opened', openings: [full] });
    },
  });
  const sendDrawerOpenings = () => {
    const queued = state.data.drawer_openings;
    for (let i = 0; i < queued.length; i += MAX_DRAWER_OPENINGS_PER_MESSAGE) link?.send({ type: 'drawer_opened', openings: queued.slice(i, i + MAX_DRAWER_OPENINGS_PER_MESSAGE) });
  };
  const deviceReports = new DeviceReports(
    () => counter.devices(),
    (message) => link?.send(message) ?? false,
  );
  // A reader as the counter sees it: with the receipt policy its approvals follow.
  const shown = (reader: ReaderState): ReaderState => {
    const key = book.find(reader.processor_terminal_id) ?? book.find(reader.id);
    return key === undefined ? reader : { ...reader, receipt_policy: policies.forReader(key) };
  };
  const showReaders = () => local?.broadcast('readers', { type: 'readers', readers: book.states().map(shown) });
  const book = new ReaderBook(ports.clock, {
    reader(reader, activityChanged) {
      const view = shown(reader);
      local?.broadcast('readers', { type: 'reader', reader: view });
      if (activityChanged) counter.onReader(view, view.receipt_policy ?? policies.forSale());
    },
    readers(readers) {
      local?.broadcast('readers', { type: 'readers', readers: readers.map(shown) });
      state.data.readers = book.keys().map((key) => {
        const info = book.info(key)!;
        return { key, ...info, last_seen_at: book.get(key)?.last_seen_at ?? null };
      });
      state.save();
    },
  });
  const policies = new ReceiptPolicies(config.receipts, state, book);
  // Readers known from earlier runs show at once (offline until a driver sees them).
  for (const entry of state.data.readers) {
    if (!['processor', 'simulated'].includes(entry.driver)) continue;
    book.remember(entry.key, { driver: entry.driver, id: entry.id, processor_terminal_id: entry.processor_terminal_id, name: entry.name, serial_number: entry.serial_number, location_id: entry.location_id ?? null }, entry.last_seen_at);
  }

  const ctx: DriverContext = { book, api, state, logger, serial: ports.serial };
  const simulated = new SimulatedDriver(ctx, config.simulate);
  const processor = new ProcessorDriver(ctx, { includeProcessorReaders: config.processorReaders, simulated: () => simulated.ids() });
  const drivers: ReaderDriver[] = [simulated, processor];
  const driverOf = (key: string) => drivers.find((d) => d.handles(key));

  const heartbeat = (): AgentUpMessage => ({
    type: 'heartbeat',
    readers: book.keys().flatMap((key) => {
      const reader = book.get(key);
      return reader ? [{ reader: refOf(key), status: reader.status }] : [];
    }),
  });

  const onServer = (message: ServerDownMessage) => {
    switch (message.type) {
      case 'welcome': {
        state.data.merchant = message.merchant;
        state.data.cursor ??= message.cursor;
        link?.send(heartbeat());
        deviceReports.welcome();
        sendDrawerOpenings();
        syncOffline();
        return;
      }
      case 'reports_ack':
        // The answer to reports, which this agent does not send (the server pushes reader views).
        return;
      case 'drawer_ack':
        state.acknowledgeDrawerOpenings(message.ids);
        return;
      case 'reader_states':
        processor.snapshot(message.readers);
        // The readers just learnt are reported online now, not a heartbeat interval later.
        link?.send(heartbeat());
        return;
      case 'reader_state':
        processor.changed(message.reader);
        return;
      case 'locations':
        // A policy changed on the server: the counter's readers show it, and the next approval follows it.
        if (policies.setLocations(message.locations)) {
          logger.info({ locations: message.locations.map((l) => ({ id: l.id, receipt_policy: l.receipt_policy })), override: config.receipts ?? null }, 'receipt policies');
          showReaders();
        }
        return;
      case 'presence':
        return;
      case 'transaction': {
        state.data.cursor = message.seq;
        state.save();
        const summary = TransactionSummarySchema.safeParse(message.transaction);
        if (!summary.success) {
          logger.warn({ seq: message.seq }, 'a pushed transaction does not fit the summary schema; skipped');
          return;
        }
        local?.broadcast('transactions', { type: 'transaction', transaction: summary.data });
        return;
      }
      case 'error':
        logger.warn({ type: message.error.type, code: message.error.code }, `the server refused a message: ${message.error.message}`);
        return;
    }
  };

  const resolveReader = (reader: string) => {
    const key = book.find(reader);
    if (!key) throw fail(404, 'invalid_request_error', 'resource_missing', `This agent follows no reader ${reader}`);
    const state = book.get(key)!;
    if (!state.processor_terminal_id) throw fail(400, 'invalid_request_error', 'reader_not_registered', `Reader ${reader} is not registered on the server (POST /v1/terminals with its serial number's code)`);
    return { key, reader: state };
  };

  const command = async (cmd: Command): Promise<unknown> => {
    switch (cmd.type) {
      case 'start_payment': {
        const { key, reader } = resolveReader(cmd.reader);
        // A reader mid-payment would refuse this one: refuse before creating it, so no pending
        // payment is left behind, and name the payment in the way.
        if ((reader.activity === 'waiting_for_card' || reader.activity === 'processing' || reader.activity === 'canceled_on_reader') && reader.transaction_id) {
          throw fail(409, 'invalid_request_error', 'reader_busy', `The reader is busy with payment ${reader.transaction_id}: cancel it (cancel_payment) or wait for it`);
        }
        // The processor last said the reader is offline: refused before a payment exists, so none is left behind.
        if (reader.status === 'offline') throw fail(409, 'invalid_request_error', 'reader_offline', 'The reader is offline: check its power and network, or take the payment by link');
        const { data: created } = await api.createTerminalPayment(
          {
            amount: cmd.amount,
            ...(cmd.currency ? { currency: cmd.currency } : {}),
            ...(cmd.description ? { description: cmd.description } : {}),
            ...(cmd.metadata ? { metadata: cmd.metadata } : {}),
            ...(cmd.line_items ? { line_items: cmd.line_items } : {}),
            ...(cmd.tax !== undefined ? { tax: cmd.tax } : {}),
            ...(/^[0-9a-f-]{36}$/.test(reader.id) ? { terminal_id: reader.id } : {}),
          },
          // A counter retrying the same request_id gets the same payment, not a second one.
          { idempotencyKey: `agent_${agentId}_${cmd.request_id}` },
        );
        if (!created.payment_intent_id) throw fail(502, 'api_error', 'payment_intent_missing', `Payment ${created.reference} has no processor payment to send to the reader`);
        let action: Awaited<ReturnType<typeof api.processPayment>>['data'];
        try {
          action = (await api.processPayment(created.payment_intent_id, reader.processor_terminal_id)).data;
        } catch (err) {
          // The reader refused it (busy with a payment this agent had not seen yet, say): the payment
          // never reached it, so it is canceled at once rather than left pending.
          await api.cancelTransaction(created.id, { reason: 'abandoned' }).catch((cancelErr: unknown) => logger.warn({ err: cancelErr, transaction: created.id }, 'could not cancel a payment the reader refused'));
          throw err;
        }
        driverOf(key)?.paymentStarted(key, { transaction_id: created.id, amount: created.amount, currency: created.currency });
        return { transaction: created, reader_action: action };
      }
      case 'process_payment': {
        const { key, reader } = resolveReader(cmd.reader);
        const busy = (reader.activity === 'waiting_for_card' || reader.activity === 'processing') && reader.transaction_id && reader.transaction_id !== cmd.transaction_id;
        if (busy) throw fail(409, 'invalid_request_error', 'reader_busy', `The reader is busy with payment ${reader.transaction_id}: cancel it (cancel_payment) or wait for it`);
        const { data: txn } = await api.getTransaction(cmd.transaction_id);
        if (!txn.payment_intent_id) throw fail(409, 'invalid_request_error', 'transaction_not_processable', `Payment ${txn.reference} is not a reader payment`);
        const { data: action } = await api.processPayment(txn.payment_intent_id, reader.processor_terminal_id);
        driverOf(key)?.paymentStarted(key, { transaction_id: txn.id, amount: txn.amount, currency: txn.currency });
        return { transaction: txn, reader_action: action };
      }
      case 'cancel_payment': {
        const { data: canceled } = await api.cancelTransaction(cmd.transaction_id, { reason: cmd.reason ?? 'requested_by_customer' });
        const key = canceled.reader_id ? book.find(canceled.reader_id) : undefined;
        if (key) driverOf(key)?.watch(key);
        return canceled;
      }
      case 'simulate_tap': {
        if (mode !== 'test') throw fail(400, 'invalid_request_error', 'livemode_not_allowed', 'simulate_tap needs the agent to run with a test key');
        const { key, reader } = resolveReader(cmd.reader);
        driverOf(key)?.watch(key);
        try {
          const { data } = await api.simulatePayment({
            reader_id: reader.processor_terminal_id,
            ...(cmd.amount_tip !== undefined ? { amount_tip: cmd.amount_tip } : {}),
            ...(cmd.card_number ? { card_number: cmd.card_number } : {}),
          });
          return data;
        } finally {
          driverOf(key)?.watch(key);
        }
      }
      case 'cash_sale':
        return counter.cashSale(cmd, policies.forSale(cmd.reader));
      case 'print_receipt':
        return counter.printReceipt(cmd);
      case 'open_drawer':
        return counter.openDrawer(cmd);
    }
  };

  local = await LocalServer.listen(
    config.listen.host,
    config.listen.port,
    config.token,
    {
      welcome: () => ({
        type: 'welcome',
        protocol: PROTOCOL_VERSION,
        agent_id: agentId,
        mode,
        merchant: state.data.merchant ?? { id: '', business_name: '' },
        upstream: link?.connected ? 'connected' : 'disconnected',
      }),
      readers: () => ({ type: 'readers', readers: book.states().map(shown) }),
      devices: () => ({ type: 'devices', devices: counter.devices() }),
      offline: offlineMessage,
      command,
    },
    logger,
  );

  link = new UpstreamLink(
    ports.upstream,
    { serverUrl: config.serverUrl, apiKey: config.apiKey },
    {
      hello: () => ({
        type: 'hello',
        protocol: UPSTREAM_PROTOCOL_VERSION,
        agent_id: agentId,
        name: config.name ?? hostname(),
        version: AGENT_VERSION,
        heartbeat_ms: config.heartbeatMs,
        cursor: state.data.cursor,
      }),
      message: onServer,
      status: (status) => {
        const message: AgentMessage = { type: 'upstream', status };
        local?.broadcast(null, message);
        if (status === 'connected') syncOffline();
        logger.info({ status }, status === 'connected' ? 'upstream connected' : 'upstream disconnected');
      },
    },
    logger,
  );

  let stopped = false;
  let retryTimer: NodeJS.Timeout | undefined;
  const startDrivers = async (): Promise<void> => {
    try {
      await simulated.start();
      await processor.start();
    } catch (err) {
      if (stopped) return;
      logger.warn({ err: err instanceof ApiRequestError ? err.error : err }, 'could not start the reader drivers; retrying');
      await new Promise<void>((resolve) => {
        retryTimer = setTimeout(resolve, DRIVER_RETRY_MS);
      });
      if (!stopped) return startDrivers();
    }
  };
  counter.start();
  // The first pass finishes before the first heartbeat, so readers are online within one; a server
  // that is down at start-up does not hold the local websocket back.
  const first = startDrivers();
  await Promise.race([first, new Promise((r) => setTimeout(r, Math.max(config.heartbeatMs, 1_000)))]);
  link.start();
  const heartbeatTimer = setInterval(() => {
    link?.send(heartbeat());
    // A sync cut short (the server answered 503 while starting) is tried again on the next beat.
    syncOffline();
  }, config.heartbeatMs);

  logger.info({ url: local.url, agent_id: agentId, server: config.serverUrl, mode, data_dir: config.dataDir }, 'pos agent listening');

  let closing: Promise<void> | undefined;
  return {
    agentId,
    url: local.url,
    logger,
    close() {
      closing ??= (async () => {
        stopped = true;
        clearInterval(heartbeatTimer);
        clearTimeout(retryTimer);
        deviceReports.stop();
        await link?.stop(true);
        for (const driver of drivers) await driver.stop();
        await counter.stop();
        book.close();
        await local?.close();
        await offline.idle();
        await state.close();
        logger.info('pos agent stopped');
      })();
      return closing;
    },
  };
}
