/** The claim sweeper in the template: its schedule, its settings, and what its role may do. */
import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildReceiver, type Json, type SynthesizedStack, statementsOfRole, synthesize } from './support.js';

const build = buildReceiver;

describe('claim sweeper', () => {
  let s: SynthesizedStack;
  let environment: Record<string, unknown>;
  beforeAll(() => {
    s = synthesize();
    environment =
      s.template.toJSON().Resources[s.logicalId(s.stack.webhooks.sweeperFunction)].Properties.Environment
        .Variables;
  });

  it('runs the sweeper every 5 minutes from an EventBridge rule, not retrying a failed run', () => {
    s.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.sweeperFunction), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
  });

  it('waits the queue visibility timeout plus a minute before judging a PROCESSING claim stuck', () => {
    // Visibility timeout: 6 x 30 s + 1 s batching window = 181 s.
    expect(environment).toMatchObject({
      SWEEP_PROCESSING_GRACE_SECONDS: '241',
      SWEEP_RECEIVED_GRACE_SECONDS: '300',
      SWEEP_ENQUEUED_STALE_SECONDS: '3600',
      POWERTOOLS_SERVICE_NAME: 'webhook-sweeper',
    });
    expect(Object.keys(environment)).toEqual(
      expect.arrayContaining(['CLAIMS_TABLE_NAME', 'EVENT_QUEUE_URL', 'ARCHIVE_BUCKET_NAME']),
    );
  });

  it('may query the unfinished-claims index but neither scan nor query the table itself', () => {
    const role = s.logicalId(s.stack.webhooks.sweeperFunction.role as never);
    const statements = statementsOfRole(s.template, role);
    const actions = statements.flatMap((st) => [st.Action].flat() as string[]);
    expect(actions).not.toContain('dynamodb:Scan');
    const query = statements.find((st) => [st.Action].flat().includes('dynamodb:Query')) as Json;
    expect(JSON.stringify(query.Resource)).toContain('/index/unfinished-claims');
    expect(actions).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'sqs:SendMessage',
        's3:GetObject',
        's3:ListBucket',
      ]),
    );
    expect(actions).not.toContain('s3:PutObject');
  });

  it('takes the interval and the ENQUEUED staleness from props', () => {
    const custom = synthesize({
      props: { sweepInterval: Duration.minutes(1), stuckEnqueuedAfter: Duration.hours(6) },
    });
    custom.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
    const variables =
      custom.template.toJSON().Resources[custom.logicalId(custom.stack.webhooks.sweeperFunction)].Properties
        .Environment.Variables;
    expect(variables.SWEEP_ENQUEUED_STALE_SECONDS).toBe('21600');
  });

  it.each([
    [{ sweepInterval: Duration.seconds(30) }, /sweepInterval must be whole minutes from 1 to 60/],
    [{ sweepInterval: Duration.hours(2) }, /sweepInterval must be whole minutes from 1 to 60/],
    [{ stuckEnqueuedAfter: Duration.minutes(5) }, /stuckEnqueuedAfter must be at least 15 minutes/],
  ])('refuses %o', (props, message) => {
    expect(() => build(props)).toThrow(message);
  });
});
