import { Router } from 'express';
import { ApiError } from '../errors.js';
import { scopeOf } from '../http/middleware.js';
import type { RouteDoc } from '../openapi.js';
import { ReaderLiveStateSchema } from '../schemas/agents.js';
import { dataEnvelope, ErrorBodySchema, UuidParam } from '../schemas/common.js';
import { z } from '../schemas/zod.js';
import type { AgentService } from '../terminal/agents.js';

const IdParams = z.object({ id: UuidParam });

/**
 * Agent-facing routes: the on-premise agent reads live reader state here so a shop PC never holds
 * the platform's processor keys. Any secret key may call them; the counter should not need to.
 */
export const agentReaderDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/terminal/readers/{id}/state',
    summary: "Agent-facing: a reader's live processor state (its current action), uuid or tmr_ id",
    params: IdParams,
    response: dataEnvelope(ReaderLiveStateSchema),
  },
  { method: 'get', path: '/v1/terminal/reader-states', summary: "Agent-facing: every reader's live processor state", response: dataEnvelope(z.array(ReaderLiveStateSchema)) },
  {
    method: 'get',
    path: '/v1/agent/connect',
    summary: 'Agent-facing: the upstream websocket (upgrade with Authorization: Bearer sk_…); a plain GET is 426',
    status: 426,
    response: ErrorBodySchema,
  },
];

export function agentReadersRouters(agents: AgentService): { terminal: Router; agent: Router } {
  const terminal = Router();
  terminal.get('/readers/:id/state', async (req, res) => {
    res.json({ data: await agents.readerState(scopeOf(req), String(req.params.id)) });
  });
  terminal.get('/reader-states', async (req, res) => {
    res.json({ data: await agents.readerStates(scopeOf(req)) });
  });
  const agent = Router();
  // A websocket upgrade never reaches Express (server/routes/agent-upstream.ts takes it first).
  agent.get('/connect', () => {
    throw new ApiError(426, 'invalid_request_error', 'This endpoint is a websocket: connect with an Upgrade: websocket request', { code: 'upgrade_required' });
  });
  return { terminal, agent };
}
