import { UPSTREAM_PATH, UPSTREAM_PROTOCOL_VERSION, UPSTREAM_PROTOCOLS_ACCEPTED } from '../agent-upstream.js';
import { POS_VERSION } from '../version.js';
import { z } from './zod.js';

/**
 * What `GET /v1/agent/connect` answers without an upgrade: the upstream protocol this server
 * speaks, so an agent or an operator can check an agent's version against it before upgrading
 * either (docs/agent-protocol.md, "Versions").
 */
export const AgentProtocolSchema = z
  .object({
    object: z.literal('agent_protocol'),
    current: z.number().int().positive().openapi({ description: 'The protocol agents of this server’s version speak', example: 2 }),
    accepted: z
      .array(z.number().int().positive())
      .min(1)
      .openapi({ description: "The protocols a `hello` may name: the current one and the one before. Any other is refused (`protocol_unsupported`)", example: [1, 2] }),
    server_version: z.string().openapi({ description: 'The pos version of this server', example: '0.2.0' }),
    websocket_path: z.string().openapi({ description: 'Where the websocket is: this path, upgraded (Connection: Upgrade, Upgrade: websocket)', example: UPSTREAM_PATH }),
  })
  .openapi('AgentProtocol');

export type AgentProtocol = z.infer<typeof AgentProtocolSchema>;

export function agentProtocol(): AgentProtocol {
  return { object: 'agent_protocol', current: UPSTREAM_PROTOCOL_VERSION, accepted: [...UPSTREAM_PROTOCOLS_ACCEPTED], server_version: POS_VERSION, websocket_path: UPSTREAM_PATH };
}
