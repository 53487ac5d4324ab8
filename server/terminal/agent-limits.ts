/**
 * What agents may keep on the server: how many agents one key may have, and for how long an agent
 * not heard from still counts. The connection's own limits (message rate, backlog) are in
 * server/http/agent-limits.ts. Written down in docs/agent-protocol.md ("Limits").
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

export interface AgentLimits {
  agentsPerKey: number;
  agentIdleMs: number;
}

export const AGENT_LIMITS: AgentLimits = {
  agentsPerKey: MAX_AGENTS_PER_KEY,
  agentIdleMs: AGENT_IDLE_MS,
};
