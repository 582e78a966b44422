/**
 * `npm run bench` with tiny counts: the in-process measurements (receiver latency against both
 * baselines, capacity units, processor durations, log volume), the cost model and the report, run
 * against the test suite's DynamoDB Local, SQS emulator and S3 server. Not the load through the local
 * stack and not cdk synth (both are the full run's); this only proves the bench still measures what
 * docs/performance.md reports.
 */
import { describe, expect, inject, it } from 'vitest';
import { pipelineCost } from '../../bench/cost.js';
import { runInProcess } from '../../bench/inprocess.js';
import { claimCheckBreakEven } from '../../bench/large-payloads.js';
import {
  accessLogBytes,
  accessLogLine,
  platformLogBytes,
  platformLogLines,
} from '../../bench/log-sources.js';
import { PRICES } from '../../bench/prices.js';
import { renderReport } from '../../bench/report.js';
import { buildResults } from '../../bench/results.js';
import { measureSweepCost } from '../../bench/sweeper.js';
import { CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES } from '../../lambdas/shared/payload-limits.js';

const finite = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

describe('the benchmark, smoke run', () => {
  it('measures every in-process figure with finite numbers and at least one write unit per new event', async () => {
    const inProcess = await runInProcess(
      {
        dynamoDbEndpoint: inject('dynamoDbEndpoint'),
        sqsEndpoint: inject('sqsEndpoint'),
        s3Endpoint: inject('s3Endpoint'),
      },
      { counts: { latency: 3, warmup: 1, capacity: 2, processor: 4, logs: 2 } },
    );

    const latency = inProcess.receiverLatencyMs;
    for (const variant of [
      latency.ours,
      latency.oursLean,
      latency.bare,
      latency.bareOurIo,
      latency.powertools,
    ]) {
      for (const kind of [variant.new, variant.duplicate]) {
        expect(kind.n).toBe(3);
        expect(finite(kind.p50) && finite(kind.p99)).toBe(true);
      }
    }
    for (const ratios of Object.values(latency.ratios)) {
      expect(Object.values(ratios).every(finite)).toBe(true);
    }

    const { capacity } = inProcess;
    expect(capacity.ours.receiverNew.write).toBeGreaterThanOrEqual(1);
    expect(capacity.bare.receiverNew.write).toBeGreaterThanOrEqual(1);
    expect(capacity.ours.receiverDuplicate.write).toBeGreaterThanOrEqual(1);
    // The duplicate counter is the second write of a duplicate: without it, the failed claim write.
    expect(capacity.ours.receiverDuplicate.write).toBe(2);
    expect(capacity.oursUncounted.receiverDuplicate.write).toBe(1);
    expect(capacity.oursUncounted.receiverNew.write).toBe(capacity.ours.receiverNew.write);
    // Without the ENQUEUED mark a new event is one write less; an early duplicate writes nothing
    // more than its failed claim write (it sends a copy), and absorbing the copy costs the processor
    // its failed lease write.
    expect(capacity.oursLean.receiverNew.write).toBe(capacity.ours.receiverNew.write - 1);
    expect(capacity.oursLean.receiverDuplicate.write).toBe(1);
    expect(capacity.oursLean.copyInProcessor.write).toBe(1);
    expect(capacity.ours.pipelineNew?.write).toBeGreaterThan(capacity.ours.receiverNew.write);
    expect(capacity.powertools.pipelineNew?.write).toBeGreaterThan(capacity.powertools.receiverNew.write);
    expect(capacity.archive.enabled).toBe(true);
    // One archive object per batch (of one provider and day), not one per event.
    expect(capacity.archive.requestsPerEvent.PutObject).toBeGreaterThan(0);
    expect(capacity.archive.requestsPerEvent.PutObject).toBeLessThan(1);

    for (const processor of [inProcess.processorMs.ours, inProcess.processorMs.powertools]) {
      expect(finite(processor.perMessage.p50) && finite(processor.billedMeanBatchMs)).toBe(true);
    }
    expect(inProcess.logBytes.receiverNew).toBeGreaterThan(0);

    const results = buildResults({
      command: 'smoke',
      startedMs: Date.now(),
      machine: {
        cpuModel: 'test',
        cpus: 1,
        memoryGiB: 1,
        platform: 'test',
        node: process.version,
        java: 'test',
        packages: {},
      },
      settings: {
        events: 0,
        duplicates: 0.1,
        concurrentShare: 0.5,
        concurrency: 1,
        latency: 3,
        warmup: 1,
        capacity: 2,
        processor: 4,
        logs: 2,
        large: 1,
        sweep: 1,
        startupRuns: 0,
        seed: 1,
        quick: true,
      },
      inProcess,
      costConfig: {
        receiverMemoryMb: 512,
        processorMemoryMb: 512,
        batchSize: 10,
        duplicateShare: 0.1,
        archiveRetentionDays: 90,
      },
    });
    for (const lines of [
      results.costPerMillion.ours.newEvents,
      results.costPerMillion.powertools.duplicates,
    ]) {
      expect(Object.values(lines).every(finite)).toBe(true);
    }
    expect(results.costPerMillion.ours.newEvents.apiGateway).toBe(1);
    expect(results.costPerMillion.oursUncounted.duplicates.dynamoDb).toBeLessThan(
      results.costPerMillion.ours.duplicates.dynamoDb,
    );
    const lean = results.costPerMillion.oursLean;
    expect(lean.newEvents.totalDeployed).toBeLessThan(results.costPerMillion.ours.newEvents.totalDeployed);
    expect(lean.copies.sqs).toBeGreaterThan(0);
    expect(finite(lean.breakEvenCopiesPerEvent) && lean.breakEvenCopiesPerEvent > 0).toBe(true);
    // Every target of the cost issue is checked by the run, met or not.
    expect(results.aims.map((a) => a.aim)).toEqual(
      expect.arrayContaining([
        'one write unit per duplicate in the receiver',
        'deployed cost per million new events at most $6.00 and below the Powertools variant',
        'deployed cost per million duplicates at most $2.30',
        'processor time per message within 1.2x of the Powertools variant',
      ]),
    );
    expect(renderReport(results)).toContain('Receiver latency');
    expect(renderReport(results)).toContain('Claim-check break-even');
  }, 60_000);

  it('measures a sweep: the due run re-sends and reports, the quiet run is the 33 index queries alone', async () => {
    const sweepCost = await measureSweepCost(
      {
        dynamoDbEndpoint: inject('dynamoDbEndpoint'),
        sqsEndpoint: inject('sqsEndpoint'),
        s3Endpoint: inject('s3Endpoint'),
      },
      { finished: 20, stuck: 2, progress: () => undefined },
    );
    expect(sweepCost.dueRun).toMatchObject({ requeued: 2, reported: 2 });
    expect(sweepCost.dueRun.requests).toEqual(['Query x33', 'GetItem x4', 'UpdateItem x4']);
    expect(sweepCost.quietRun).toMatchObject({ writeUnits: 0, requests: ['Query x33'] });
    expect(sweepCost.quietRun.readUnitsAtLeast).toBe(16.5);
    expect(sweepCost.scanReadUnits).toBeGreaterThan(sweepCost.quietRun.readUnits);
    expect(finite(sweepCost.quietMonthUsd) && finite(sweepCost.scanMillionMonthUsd)).toBe(true);
  }, 60_000);

  it('derives the default claim-check threshold from the cost model: 7 chunks (448 KiB)', () => {
    const breakEven = claimCheckBreakEven();
    // The processor archives per batch, so a claim check pays its own PUT ($5/M) and GET ($0.40/M)
    // plus a one-chunk message each way; each 64 KiB chunk of an inline message costs $0.80/M.
    expect(breakEven.thresholdBytes).toBe(7 * 65_536);
    expect(CLAIM_CHECK_THRESHOLD_DEFAULT_BYTES).toBe(breakEven.thresholdBytes);
    const seventh = breakEven.rows[6];
    const eighth = breakEven.rows[7];
    expect(seventh?.inMessageUsd).toBeLessThanOrEqual(seventh?.claimCheckUsd ?? 0);
    expect(eighth?.inMessageUsd).toBeGreaterThan(eighth?.claimCheckUsd ?? 0);
  });
});

describe('log sources the cost model counts whatever the code logs', () => {
  const zero = { write: 0, read: 0 };
  const inputs = {
    receiverNewMs: 0,
    receiverDuplicateMs: 0,
    processorBatchMs: 0,
    processorBatchRecords: 1,
    receiverNewUnits: zero,
    receiverDuplicateUnits: zero,
    processorUnits: zero,
  };
  const config = {
    receiverMemoryMb: 512,
    processorMemoryMb: 512,
    batchSize: 10,
    duplicateShare: 0.1,
    archiveRetentionDays: 90,
  };

  it("prices Lambda's START/END/REPORT per invocation and the access log line per request", () => {
    const platform = platformLogBytes(512);
    const access = accessLogBytes();
    // Three lines of about 60-140 bytes; the access line follows the stage's format.
    expect(platformLogLines(512)).toHaveLength(3);
    expect(platform).toBeGreaterThan(200);
    expect(JSON.parse(accessLogLine())).toMatchObject({ routeKey: 'POST /webhooks/stripe', status: '200' });
    const cost = pipelineCost(
      {
        ...inputs,
        platformLogBytes: { receiver: platform, processor: platform },
        accessLogBytesPerRequest: access,
      },
      config,
    );
    const perGb = PRICES.cloudWatchLogsIngestedGb.usd;
    const expected = (bytes: number) => Math.round(((1e6 * bytes) / 1024 ** 3) * perGb * 10_000) / 10_000;
    expect(cost.newEvents.cloudWatchLogs).toBe(expected(platform + access + platform / 10));
    expect(cost.duplicates.cloudWatchLogs).toBe(expected(platform + access));
    expect(pipelineCost(inputs, config).newEvents.cloudWatchLogs).toBe(0);
  });
});
