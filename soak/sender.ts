/**
 * The soak's providers: each planned send posted at its time (a few at once when the plan says
 * concurrent copies), signed afresh on every attempt, and retried as providers retry: on a 5xx, a
 * 429 or a failed request, after 1, 2, 4 and then 8 s, up to `maxAttempts`. Every answer is kept for
 * the checker.
 */
import type { DeliveryResult } from './checker.js';
import { signedDelivery } from './deliveries.js';
import type { PlannedSend, SoakEvent, SoakProvider } from './workload.js';

export interface SenderOptions {
  readonly urls: Readonly<Record<SoakProvider, string>>;
  readonly secrets: Readonly<Record<SoakProvider, string>>;
  /** Attempts per delivery, the first included. @default 8 */
  readonly maxAttempts?: number;
  /** Requests in flight at most. @default 24 */
  readonly concurrency?: number;
  readonly requestTimeoutMs?: number;
}

const BACKOFF_MS = [1_000, 2_000, 4_000, 8_000];

export interface Sender {
  /** Sends every planned send at its time (relative to `startedAt`); resolves when all are answered. */
  run(sends: readonly PlannedSend[], events: readonly SoakEvent[], startedAt: number): Promise<void>;
  results(): readonly DeliveryResult[];
}

export function createSender(options: SenderOptions): Sender {
  const results: DeliveryResult[] = [];
  const maxAttempts = options.maxAttempts ?? 8;
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    while (inFlight >= (options.concurrency ?? 24)) await new Promise<void>((r) => waiting.push(r));
    inFlight++;
  };
  const release = () => {
    inFlight--;
    waiting.shift()?.();
  };

  const post = async (event: SoakEvent, eventId: string | undefined): Promise<DeliveryResult> => {
    const url = options.urls[event.provider];
    const delivery = signedDelivery(event, {
      secret: options.secrets[event.provider],
      url,
      nowSeconds: Math.floor(Date.now() / 1000),
      ...(eventId === undefined ? {} : { eventId }),
    });
    await slot();
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
        signal: AbortSignal.timeout(options.requestTimeoutMs ?? 30_000),
      });
      const text = await response.text();
      let outcome = response.headers.get('x-webhook-outcome') ?? undefined;
      try {
        outcome ??= (JSON.parse(text) as { outcome?: string }).outcome;
      } catch {
        // not JSON
      }
      return { event: event.index, status: response.status, ...(outcome ? { outcome } : {}) };
    } catch (error) {
      return { event: event.index, status: 0, error: (error as Error).message };
    } finally {
      release();
    }
  };

  const deliver = async (event: SoakEvent, eventId: string | undefined) => {
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const result = await post(event, eventId);
      results.push(result);
      const retry = result.status === 0 || result.status === 429 || result.status >= 500;
      if (!retry) return;
      await new Promise((r) => setTimeout(r, BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]));
    }
  };

  return {
    results: () => [...results],
    run: async (sends, events, startedAt) => {
      const all: Promise<void>[] = [];
      for (const send of sends) {
        const wait = startedAt + send.atMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const event = events[send.event];
        if (event === undefined) continue;
        for (let copy = 0; copy < send.copies; copy++) all.push(deliver(event, send.eventId));
      }
      await Promise.all(all);
    },
  };
}
