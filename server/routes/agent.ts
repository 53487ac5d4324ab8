import { upgradeRequired } from '../errors.js';
import type { Permission } from '../../shared/contract/permissions.js';
import { route } from '../http/route-table.js';
import { ErrorBodySchema } from '../../shared/contract/common.js';

/**
 * What the agent's websocket needs of a restricted key: it reports readers' presence and activity
 * (terminal) and is pushed the merchant's payment events (transactions).
 */
export const AGENT_CONNECT_SCOPE: readonly Permission[] = ['terminal:write', 'transactions:read'];

/** `/v1/agent`: the on-premise agent's upstream websocket; its readers' live state is under `/v1/terminal`. */
export const agentRoutes = [
  route({
    operationId: 'connectAgent',
    method: 'get',
    path: '/v1/agent/connect',
    scope: AGENT_CONNECT_SCOPE,
    summary: 'Agent-facing: the upstream websocket (upgrade with Authorization: Bearer sk_… or a restricted key with terminal:write and transactions:read); a plain GET is 426',
    responses: { 426: ErrorBodySchema },
    // A websocket upgrade never reaches Express (server/routes/agent-upstream.ts takes it first).
    handle() {
      throw upgradeRequired('This endpoint is a websocket: connect with an Upgrade: websocket request');
    },
  }),
];
