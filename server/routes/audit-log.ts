import { scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { AuditLogQuerySchema, AuditLogSchema, timeBound } from '../../shared/contract/audit.js';
import { pageRequest } from '../pagination.js';

/** The trail says who did what with which key: the secret key's to read, like the keys themselves. */
export const auditLogRoutes = [
  route({
    operationId: 'listAuditLog',
    method: 'get',
    path: '/v1/audit-log',
    scope: 'secret',
    summary: 'The audit trail, newest first: every change made through /v1 and every drawer opening, with the key, request and idempotency key; hash-chained',
    query: AuditLogQuerySchema,
    responses: { 200: AuditLogSchema },
    async handle({ audit }, { req, res, query }) {
      const gte = query.created?.gte;
      const lte = query.created?.lte;
      res.json(
        await audit.list(scopeOf(req), pageRequest(query), {
          objectId: query.object_id,
          keyId: query.key_id,
          from: gte === undefined ? undefined : timeBound(gte),
          to: lte === undefined ? undefined : timeBound(lte, true),
        }),
      );
    },
  }),
];
