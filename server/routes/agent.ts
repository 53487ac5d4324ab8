import { upgradeRequired } from '../errors.js';
import type { Permission } from '../../shared/contract/permissions.js';
import { route } from '../http/route-table.js';
import { dataEnvelope, ErrorBodySchema } from '../../shared/contract/common.js';
import { agentProtocol, AgentProtocolSchema } from '../../shared/contract/agent.js';

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
    // The same key as the websocket, so checking compatibility asks for nothing the agent lacks.
    scope: AGENT_CONNECT_SCOPE,
    summary:
      'Agent-facing: the upstream websocket (upgrade with Authorization: Bearer sk_… or a restricted key with terminal:write and transactions:read). ' +
      'A plain GET answers the agent protocols this server speaks, to check an agent against before upgrading; ' +
      'an Upgrade header without Connection: Upgrade (a proxy that drops it) is 426',
    responses: { 200: dataEnvelope(AgentProtocolSchema), 426: ErrorBodySchema },
    // A websocket upgrade never reaches Express (server/routes/agent-upstream.ts takes it first).
    handle(_services, { req, res }) {
      if (req.headers.upgrade !== undefined) {
        throw upgradeRequired(
          `Upgrade: ${req.headers.upgrade} arrived without Connection: Upgrade, so no websocket was opened: a proxy on the way may drop it (docs/agent-protocol.md)`,
        );
      }
      res.json({ data: agentProtocol() });
    },
  }),
];
