/**
 * Twilio message status callbacks: the message's latest state in the Resources table
 * (`twilio:<account>:message:<sid>`). Status callbacks carry no event time and may arrive out of
 * order (a `sent` after its `delivered`), so the order is the status's place in a message's
 * lifecycle: a message never goes back, and an earlier state arriving late writes nothing.
 * https://www.twilio.com/docs/messaging/guides/track-outbound-message-status
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import { id, joinKey, planRowWrite, str } from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

/** Each status's place in the lifecycle; the final states share one (a message reaches one of them). */
const STATUS_RANK: Readonly<Record<string, number>> = {
  scheduled: 0,
  accepted: 1,
  queued: 1,
  sending: 2,
  sent: 3,
  receiving: 3,
  received: 4,
  delivered: 4,
  undelivered: 4,
  failed: 4,
  canceled: 4,
  read: 5,
};

const first = (value: unknown): unknown => (Array.isArray(value) ? value[0] : value);

export const twilioMessage: AppApplier<ExampleApp, 'twilio'> = {
  async plan(event, context) {
    const sid = id(first(event.payload.MessageSid) ?? first(event.payload.SmsSid));
    const status = str(first(event.payload.MessageStatus) ?? first(event.payload.SmsStatus));
    if (!sid || !status) return { outcome: 'noop' };
    return planRowWrite(context, {
      table: 'resources',
      pk: joinKey(['twilio', event.account, 'message', sid]),
      // No event time is sent: every callback of a message is "the same second", ranked by status.
      order: { at: 0, rank: STATUS_RANK[status] ?? 0, eventId: event.eventId },
      attributes: {
        provider: 'twilio',
        kind: 'message',
        objectId: sid,
        status,
        errorCode: str(first(event.payload.ErrorCode)),
      },
    });
  },
};
