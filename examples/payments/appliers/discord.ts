/**
 * Discord interactions: a command is recorded as a request to act on
 * (`discord:<application>:command:<interaction id>`, one row per interaction), and a button or
 * select on a message sets that message's decision (`discord:<application>:message:<message id>`):
 * the latest click wins, ordered by the interaction id, a snowflake whose top bits are the
 * millisecond Discord received it, so two clicks in the same second keep their order.
 * The follow-up message (through the interaction `token`, within 15 minutes) is the application's.
 * https://discord.com/developers/docs/interactions/receiving-and-responding
 */

import type { AppApplier } from '../../../lambdas/processor/sdk/index.js';
import { id, joinKey, obj, planRowWrite, str } from '../../../lambdas/processor/sdk/index.js';
import type { ExampleApp } from '../app-types.js';

/** The interaction's time from its snowflake id: whole seconds, and the millisecond within it. */
function snowflakeOrder(interactionId: string): { at: number; rank: number } | undefined {
  if (!/^\d{1,20}$/.test(interactionId)) return undefined;
  const ms = (BigInt(interactionId) >> 22n) + 1_420_070_400_000n;
  return { at: Number(ms / 1000n), rank: Number(ms % 1000n) };
}

/** Who acted: the guild member's user, or the user in a direct message. */
const userOf = (payload: Record<string, unknown>): string | undefined =>
  id(obj(obj(payload.member)?.user)?.id) ?? id(obj(payload.user)?.id);

export const discordCommand: AppApplier<ExampleApp, 'discord'> = {
  async plan(event, context) {
    const data = obj(event.payload.data);
    const order = snowflakeOrder(event.eventId);
    if (!data || !order) return { outcome: 'noop' };
    return planRowWrite(context, {
      table: 'resources',
      pk: joinKey(['discord', event.account, 'command', event.eventId]),
      order: { ...order, eventId: event.eventId },
      attributes: {
        provider: 'discord',
        kind: 'command',
        objectId: event.eventId,
        status: 'requested',
        command: str(data.name) ?? str(data.custom_id),
        requestedBy: userOf(event.payload),
        channelId: id(event.payload.channel_id),
        guildId: id(event.payload.guild_id),
      },
    });
  },
};

export const discordMessageDecision: AppApplier<ExampleApp, 'discord'> = {
  async plan(event, context) {
    const messageId = id(obj(event.payload.message)?.id);
    const choice = str(obj(event.payload.data)?.custom_id);
    const order = snowflakeOrder(event.eventId);
    if (!messageId || !choice || !order) return { outcome: 'noop' };
    return planRowWrite(context, {
      table: 'resources',
      pk: joinKey(['discord', event.account, 'message', messageId]),
      order: { ...order, eventId: event.eventId },
      attributes: {
        provider: 'discord',
        kind: 'message',
        objectId: messageId,
        status: choice,
        decidedBy: userOf(event.payload),
      },
    });
  },
};
