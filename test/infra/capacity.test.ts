import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROCESSOR_DEFAULTS } from '../../lib/idempotent-webhook-receiver.js';
import { buildReceiver, type SynthesizedStack, synthesize } from './support.js';

const build = buildReceiver;

describe('concurrency defaults', () => {
  let s: SynthesizedStack;
  beforeAll(() => {
    s = synthesize();
  });

  it('caps the processor’s event source mapping at 100 concurrent batches', () => {
    expect(PROCESSOR_DEFAULTS.maxConcurrency).toBe(100);
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: s.logicalId(s.stack.webhooks.processorFunction) },
      ScalingConfig: { MaximumConcurrency: 100 },
    });
  });

  it('reserves no concurrency for either function', () => {
    for (const fn of [s.stack.webhooks.receiverFunction, s.stack.webhooks.processorFunction]) {
      const properties = s.template.toJSON().Resources[s.logicalId(fn)].Properties;
      expect(properties.ReservedConcurrentExecutions).toBeUndefined();
    }
  });
});

describe('concurrency props', () => {
  let s: SynthesizedStack;
  beforeAll(() => {
    s = synthesize({
      props: {
        processorMaxConcurrency: 50,
        processorReservedConcurrency: 60,
        receiverReservedConcurrency: 300,
      },
    });
  });

  it('applies processorMaxConcurrency to the event source mapping', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ScalingConfig: { MaximumConcurrency: 50 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('reserves processorReservedConcurrency for the processor', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^Webhook processor'),
      ReservedConcurrentExecutions: 60,
    });
  });

  it('reserves receiverReservedConcurrency for the receiver', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^Webhook receiver'),
      ReservedConcurrentExecutions: 300,
    });
  });

  it('accepts processor reserved concurrency equal to the maximum concurrency', () => {
    expect(() => build({ processorMaxConcurrency: 20, processorReservedConcurrency: 20 })).not.toThrow();
  });
});

describe('concurrency props validation', () => {
  it.each([1, 1_001, 2.5, Number.NaN])('refuses processorMaxConcurrency %s (AWS allows 2-1000)', (value) => {
    expect(() => build({ processorMaxConcurrency: value })).toThrow(
      /processorMaxConcurrency must be an integer from 2 to 1000/,
    );
  });

  it('refuses processor reserved concurrency below the default maximum concurrency', () => {
    expect(() => build({ processorReservedConcurrency: 99 })).toThrow(
      /processorReservedConcurrency \(99\) must be an integer of at least processorMaxConcurrency \(100\)/,
    );
  });

  it('refuses processor reserved concurrency below a given maximum concurrency', () => {
    expect(() => build({ processorMaxConcurrency: 10, processorReservedConcurrency: 5 })).toThrow(
      /processorReservedConcurrency \(5\) must be an integer of at least processorMaxConcurrency \(10\)/,
    );
  });

  it('refuses a fractional processor reserved concurrency', () => {
    expect(() => build({ processorMaxConcurrency: 10, processorReservedConcurrency: 10.5 })).toThrow(
      /processorReservedConcurrency \(10\.5\) must be an integer/,
    );
  });

  it.each([0, -1, 1.5])('refuses receiverReservedConcurrency %s', (value) => {
    expect(() => build({ receiverReservedConcurrency: value })).toThrow(
      /receiverReservedConcurrency must be a positive integer \(0 would throttle every delivery\)/,
    );
  });
});
