/**
 * What agents may keep on the server: how many agents one key may have, and how many of an agent's
 * reader-activity reports are kept, for how long. The connection's own limits (message rate,
 * backlog) are in server/http/agent-limits.ts. Written down in docs/agent-protocol.md ("Limits").
 */

/**
 * Distinct agents (agent ids) one key may have. A shop runs an agent on each till PC, a handful per
 * key; 50 leaves room for a large store, for PCs replaced with a fresh data dir, and for the
 * benchmark's 20 agents on one key, while a script making up agent ids is stopped at 50 rows.
 */
export const MAX_AGENTS_PER_KEY = 50;

/**
 * An agent not heard from (no hello, no heartbeat) for this long no longer counts against its
 * key's limit: a PC retired without a goodbye frees its place after a month.
 */
export const AGENT_IDLE_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Reports kept per agent: its newest 10,000 by sequence number, as many as the agent itself queues
 * while it cannot reach the server. Nothing reads them back but support, so more is only disk: at
 * about 400 bytes a row, an agent holds at most ~4 MB.
 */
export const REPORTS_KEPT_PER_AGENT = 10_000;

/** Reports are kept at most this long after the server received them: a month of support history. */
export const REPORT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Reports deleted per transaction while pruning. On SQLite a delete blocks the event loop while it
 * runs; 500 rows take a few milliseconds, so requests wait no longer than for one busy request.
 */
export const REPORT_PRUNE_BATCH = 500;

/**
 * How late past its period a report may be pruned. The retention pass runs when the oldest report
 * falls due; with reports arriving all the time that would be every few seconds, for a few rows
 * each. Waiting up to an hour prunes an hour's worth in one pass instead.
 */
export const REPORT_PRUNE_SLACK_MS = 60 * 60 * 1000;

export interface AgentLimits {
  agentsPerKey: number;
  agentIdleMs: number;
  reportsKept: number;
  reportRetentionMs: number;
  pruneBatch: number;
}

export const AGENT_LIMITS: AgentLimits = {
  agentsPerKey: MAX_AGENTS_PER_KEY,
  agentIdleMs: AGENT_IDLE_MS,
  reportsKept: REPORTS_KEPT_PER_AGENT,
  reportRetentionMs: REPORT_RETENTION_MS,
  pruneBatch: REPORT_PRUNE_BATCH,
};
