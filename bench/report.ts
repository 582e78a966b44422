/** The readable table printed to stdout (and pasted into docs/performance.md). */

import { CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES } from '../lambdas/shared/payload-limits.js';
import type { BenchResults } from './results.js';
import type { SweepCostResult } from './sweeper.js';

const pad = (value: string, width: number) => value.padEnd(width);
const padLeft = (value: string, width: number) => value.padStart(width);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
const x = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a');
const usd = (value: number) => `$${value.toFixed(4)}`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const units = (u: { write: number; read: number } | undefined) => (u ? `${u.write} W / ${u.read} R` : 'n/a');

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? pad(c, widths[i] ?? 0) : padLeft(c, widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function renderReport(results: BenchResults): string {
  const out: string[] = [];
  const m = results.machine;
  out.push(
    `Benchmark ${results.date} on ${m.cpuModel} x${m.cpus}, ${m.memoryGiB} GiB, ${m.platform}; Node ${m.node}; ${m.java}`,
  );
  const load = (values: readonly number[] | undefined) => (values ? values.join(' / ') : 'n/a');
  out.push(
    `command: ${results.command} (${results.durationSeconds} s); load average 1/5/15 min: start ${load(m.loadAverageStart)}, end ${load(m.loadAverageEnd)}`,
  );

  const r = results.receiverLatencyMs;
  out.push(
    '',
    `Receiver latency, handler in-process (ms; n=${r.n} per cell after ${r.warmup} warm-up rounds)`,
  );
  const row = (label: string, s: typeof r.ours) => [
    label,
    ms(s.new.p50),
    ms(s.new.p99),
    ms(s.duplicate.p50),
    ms(s.duplicate.p99),
  ];
  out.push(
    table(
      ['variant', 'new p50', 'new p99', 'dup p50', 'dup p99'],
      [
        row('ours (createReceiverHandler)', r.ours),
        row('ours, countDuplicates: false', r.oursUncounted),
        row('ours, + markEnqueued: false (dup = copy)', r.oursLean),
        row('bare I/O (PutItem + SendMessage)', r.bare),
        row('bare, our 3 requests (+ UpdateItem)', r.bareOurIo),
        row('powertools (makeIdempotent)', r.powertools),
      ],
    ),
  );
  out.push(
    table(
      ['ratio', 'new p50', 'new p99', 'dup p50', 'dup p99'],
      (
        [
          'oursOverBare',
          'oursOverBareOurIo',
          'oursOverPowertools',
          'uncountedOverBare',
          'uncountedOverPowertools',
          'leanOverBare',
          'leanOverPowertools',
        ] as const
      ).map((k) => [
        {
          oursOverBare: 'ours / bare',
          oursOverBareOurIo: 'ours / bare 3 requests',
          oursOverPowertools: 'ours / powertools',
          uncountedOverBare: 'uncounted / bare',
          uncountedOverPowertools: 'uncounted / powertools',
          leanOverBare: 'lean / bare',
          leanOverPowertools: 'lean / powertools',
        }[k],
        x(r.ratios.newP50[k]),
        x(r.ratios.newP99[k]),
        x(r.ratios.duplicateP50[k]),
        x(r.ratios.duplicateP99[k]),
      ]),
    ),
  );
  out.push(`signature check + identity extraction alone: ${r.verifyAndExtractUs} us per delivery`);

  const c = results.capacity;
  out.push('', `DynamoDB capacity per event (write / read request units; n=${c.n} events each)`);
  out.push(
    table(
      ['', 'ours', 'uncounted', 'lean', 'powertools', 'bare'],
      [
        [
          'receiver, new event',
          units(c.ours.receiverNew),
          units(c.oursUncounted.receiverNew),
          units(c.oursLean.receiverNew),
          units(c.powertools.receiverNew),
          units(c.bare.receiverNew),
        ],
        [
          'receiver, duplicate',
          units(c.ours.receiverDuplicate),
          units(c.oursUncounted.receiverDuplicate),
          `${units(c.oursLean.receiverDuplicate)} (copy)`,
          units(c.powertools.receiverDuplicate),
          units(c.bare.receiverDuplicate),
        ],
        [
          'processor, per event',
          units(c.ours.processorPerEvent),
          '(same)',
          `(same) + ${units(c.oursLean.copyInProcessor)} per copy`,
          units(c.powertools.processorPerEvent),
          '-',
        ],
        [
          'pipeline, new event',
          units(c.ours.pipelineNew),
          '(same)',
          units(c.oursLean.pipelineNew),
          units(c.powertools.pipelineNew),
          '-',
        ],
      ],
    ),
  );
  out.push(`ours, new:       ${c.ours.receiverNew.operations.join(', ')}`);
  out.push(`ours, duplicate: ${c.ours.receiverDuplicate.operations.join(', ')}`);
  out.push(`uncounted, dup: ${c.oursUncounted.receiverDuplicate.operations.join(', ')}`);
  out.push(`ours, processor: ${(c.ours.processorPerEvent?.operations ?? []).join(', ')}`);
  out.push(
    `ours, archive:   ${
      c.archive.enabled
        ? `${Object.entries(c.archive.requestsPerEvent)
            .map(([k, v]) => `${k} ${v}`)
            .join(
              ', ',
            )} S3 requests per event, ${c.archive.meanObjectBytes} bytes per object, ${c.archive.storedBytesPerEvent} stored per event`
        : 'off (no S3 endpoint)'
    }`,
  );
  out.push(
    `largest items (bytes): ${Object.entries(c.maxItemBytes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );

  const p = results.processorMs;
  out.push(
    '',
    'Processor duration (ms per message = batch / records; in-process, effects on a loopback sink)',
  );
  out.push(
    table(
      ['', 'per msg p50', 'per msg p99', 'batch p50', 'batch p99', 'batches', 'records/batch'],
      (['ours', 'powertools'] as const).map((k) => [
        k,
        ms(p[k].perMessage.p50),
        ms(p[k].perMessage.p99),
        ms(p[k].batch.p50),
        ms(p[k].batch.p99),
        String(p[k].batch.n),
        String(p[k].meanBatchSize),
      ]),
    ),
  );

  const b = results.bundles;
  if (b) {
    out.push('', `Bundles as cdk synth builds them (synth ${(b.synthMs / 1000).toFixed(1)} s)`);
    const s = b.startup;
    const startupRow = (
      label: string,
      bundle: { bytes: number; gzipBytes: number } | undefined,
      f: { importMs: { p50: number }; readyMs: { p50: number }; processMs: { p50: number } } | undefined,
    ) => [
      label,
      bundle ? kb(bundle.bytes) : '-',
      bundle ? kb(bundle.gzipBytes) : '-',
      f ? ms(f.importMs.p50) : '-',
      f ? ms(f.readyMs.p50) : '-',
      f ? ms(f.processMs.p50) : '-',
    ];
    out.push(
      table(
        ['', 'index.mjs', 'gzip', 'import p50', 'ready p50', 'process p50'],
        [
          startupRow('receiver (--enable-source-maps)', b.receiver, s?.receiver),
          startupRow('receiver (no source maps)', b.receiver, s?.receiverNoSourceMaps),
          startupRow('processor (--enable-source-maps)', b.processor, s?.processor),
          startupRow('processor (no source maps)', b.processor, s?.processorNoSourceMaps),
          startupRow('empty node process', undefined, s?.emptyNode),
        ],
      ),
    );
    if (s)
      out.push(`startup: ${s.runs} fresh processes per case (ms); ready = process start to handler loaded`);
  }

  const l = results.load;
  if (l) {
    out.push(
      '',
      `Load through the local stack (npm start): ${l.events} events, ${l.duplicatesResent} resent later, ${l.concurrentCopies} sent as concurrent copies, ${l.concurrency} in flight`,
    );
    out.push(
      table(
        [
          'deliveries',
          'per second',
          'p50 ms',
          'p99 ms',
          'max ms',
          'retries',
          'statuses',
          'settle s',
          'e2e p50 ms',
          'e2e p99 ms',
        ],
        [
          [
            String(l.deliveries),
            l.deliveriesPerSecond.toFixed(1),
            ms(l.latencyMs.p50),
            ms(l.latencyMs.p99),
            ms(l.latencyMs.max),
            String(l.retries),
            Object.entries(l.statuses)
              .map(([k, v]) => `${k}:${v}`)
              .join(' '),
            l.settleSeconds.toFixed(1),
            ms(l.endToEndMs.p50),
            ms(l.endToEndMs.p99),
          ],
        ],
      ),
    );
    const h = l.handlerLatencyMs;
    out.push(
      `inside the stack (the functions' own latencyMs): receiver handler p50 ${ms(h.receiver.p50)} / p99 ${ms(h.receiver.p99)} ms (n=${h.receiver.n}); processor per record p50 ${ms(h.processorRecord.p50)} / p99 ${ms(h.processorRecord.p99)} ms (n=${h.processorRecord.n})`,
    );
    const e = l.effects;
    out.push(
      `exactly once: ${l.exactlyOnce ? 'YES' : 'NO'}: ${e.payments} payments, ${e.ledgerPostings} ledger postings (+${e.ledgerReplays} replays absorbed by Idempotency-Key), ${e.receipts} receipts; lost ${e.lost}, doubled ${e.doubled}; claims DONE ${l.claims.done}/${l.claims.total}, in doubt ${l.claims.inDoubt ?? 0}, deliveries counted ${l.claims.deliveriesCounted}; payment rows ${l.paymentRows}; DLQ ${l.deadLetterMessages}; queue after ${l.queueDepthAfter}`,
    );
    if (e.examples.length) out.push(`  e.g. ${e.examples.join('; ')}`);
  }

  const cost = results.costPerMillion;
  out.push('', `Cost per million events, ${cost.region}, ${cost.currency}, prices as of ${cost.pricesAsOf}`);
  const costRow = (label: string, lines: typeof cost.ours.newEvents) => [
    label,
    usd(lines.apiGateway),
    usd(lines.lambdaReceiver),
    usd(lines.lambdaProcessor),
    usd(lines.dynamoDb),
    usd(lines.sqs),
    usd(lines.total),
    usd(lines.s3Archive),
    usd(lines.cloudWatchLogs),
    usd(lines.totalDeployed),
  ];
  out.push(
    table(
      [
        '',
        'API GW',
        'λ receiver',
        'λ processor',
        'DynamoDB',
        'SQS',
        'total',
        'S3 archive',
        'logs',
        'deployed',
      ],
      [
        costRow('ours, 1M new events', cost.ours.newEvents),
        costRow('ours, 1M duplicates', cost.ours.duplicates),
        costRow('uncounted, 1M duplicates', cost.oursUncounted.duplicates),
        costRow('lean, 1M new events', cost.oursLean.newEvents),
        costRow('lean, 1M early copies', cost.oursLean.copies),
        costRow(`ours, 1M + ${results.settings.duplicates * 100}% dup`, cost.ours.withDuplicates),
        costRow('powertools, 1M new events', cost.powertools.newEvents),
        costRow('powertools, 1M duplicates', cost.powertools.duplicates),
      ],
    ),
  );
  out.push(
    `markEnqueued: false saves on every new event and costs on every early copy (a duplicate that arrives before a processor took the event): break-even at ${cost.oursLean.breakEvenCopiesPerEvent} early copies per event`,
  );

  const large = results.largePayloads;
  if (large) {
    out.push(
      '',
      `Large payloads: signed GitHub pushes through the receiver bundle, one fresh process per size (${large.receiverMemoryMb} MB function)`,
    );
    out.push(
      table(
        [
          'body',
          'n',
          'HMAC p50 ms',
          'handler p50 ms',
          'handler p99 ms',
          'RSS idle MB',
          'RSS peak MB',
          'of memory',
          'outcomes',
        ],
        large.runs.map((run) => [
          `${run.bytes / 1e6} MB`,
          String(run.deliveries),
          ms(run.hmacMs.p50),
          ms(run.handlerMs.p50),
          ms(run.handlerMs.p99),
          run.baselineRssMb.toFixed(1),
          run.peakRssMb.toFixed(1),
          `${(run.shareOfMemorySize * 100).toFixed(0)}%`,
          Object.entries(run.outcomes)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ]),
      ),
    );
  }
  const sweepCost = results.sweepCost;
  if (sweepCost) {
    const run = (r: SweepCostResult['quietRun']) =>
      `${r.readUnits} RRU reported (at most ${r.readUnitsAtLeast} billed), ${r.writeUnits} WRU: ${r.requests.join(', ')}`;
    out.push(
      '',
      `Sweeper: one run over ${sweepCost.finishedClaims} finished claims, ${sweepCost.stuckWithBody} stuck with a stored body and ${sweepCost.stuckWithoutBody} without`,
      `  due run:   ${run(sweepCost.dueRun)}; ${sweepCost.dueRun.requeued} re-sent, ${sweepCost.dueRun.reported} reported`,
      `  quiet run: ${run(sweepCost.quietRun)}; every 5 min for 30 days ${usd(sweepCost.quietMonthUsd)}`,
      `  a Scan instead: ${sweepCost.scanReadUnits} RRU for this table, ${sweepCost.scanReadUnitsPerMillionClaims} RRU per million claims (${usd(sweepCost.scanMillionMonthUsd)} a month every 5 min)`,
    );
  }
  const breakEven = results.claimCheckBreakEven;
  out.push(
    '',
    'Claim-check break-even, per million events (only what differs between the routes)',
    table(
      ['message', 'in the message', 'claim check (PUT + GET)'],
      breakEven.rows
        .filter((row, i) => i < 8 || row.messageBytes % (256 * 1024) === 0)
        .map((row) => [kb(row.messageBytes), usd(row.inMessageUsd), usd(row.claimCheckUsd)]),
    ),
    `  the message is no dearer up to ${kb(breakEven.thresholdBytes)} (the default threshold is ${kb(CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES)})`,
  );

  out.push('', 'Aims');
  for (const aim of results.aims)
    out.push(`  ${aim.met ? 'met    ' : 'NOT met'}  ${aim.aim}: ${aim.measured}`);
  return out.join('\n');
}
