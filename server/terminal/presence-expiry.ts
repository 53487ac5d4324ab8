import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import { DeadlineTimer } from '../db/deadline-timer.js';
import type { Notifications } from '../db/notify.js';
import type { AgentService } from './agents.js';

/**
 * Presence expiry without a sweep: one timer per process, set for the earliest presence deadline in
 * the database (any instance's readers and counter devices). A heartbeat or device report anywhere
 * that makes a new or earlier deadline sends the `presence` notice, and the timer is set again. When
 * the timer fires, lapsed readers go offline (with their `terminal.reader.offline` events), lapsed
 * devices too, and the timer is set for the next deadline.
 *
 * With no reader or device online there is no timer at all. With agents heartbeating, deadlines only
 * move later, so the timer fires about once per (TTL − heartbeat interval), 10 s with the defaults,
 * finds nothing, and reads the next deadline: four short reads per process (two for readers, two for
 * devices), whatever the number of agents, readers or devices. A reader goes offline within
 * milliseconds of its deadline rather than at the next tick of a sweep. On PostgreSQL every
 * instance's timer fires at the same deadline; the expiry's conditional update lets exactly one of
 * them take each reader or device offline.
 */
export class PresenceExpiry extends DeadlineTimer {
  constructor(agents: AgentService, notifications: Notifications, clock: Clock, logger: Logger) {
    super(
      {
        notice: { topic: 'presence' },
        pass: () => agents.expire(),
        next: () => agents.nextPresenceDeadline(),
        // Expiry takes deadlines strictly before now: one millisecond past the deadline it is due.
        slackMs: 1,
        name: 'presence expiry',
      },
      notifications,
      clock,
      logger,
    );
  }
}
