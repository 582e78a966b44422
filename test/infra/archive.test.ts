import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { type SynthesizedStack, statementsOfRole, synthesize } from './support.js';

describe('payload archive', () => {
  let s: SynthesizedStack;
  beforeAll(() => {
    s = synthesize();
  });

  it('expires archived events after 90 days by default', () => {
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: 'events/', ExpirationInDays: 90, Status: 'Enabled' }),
        ]),
      },
    });
  });

  it('takes the retention from the archiveRetention prop', async () => {
    const { Duration } = await import('aws-cdk-lib');
    const custom = synthesize({ props: { archiveRetention: Duration.days(400) } });
    custom.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 400 })]) },
    });
  });

  it('encrypts the bucket (SSE-S3) and blocks public access', () => {
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
  });

  it('refuses non-TLS access in the bucket policy', () => {
    s.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('names the bucket in the processor environment', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          ARCHIVE_BUCKET_NAME: { Ref: s.logicalId(s.stack.webhooks.archiveBucket) },
        }),
      },
    });
  });

  const arn = (st: SynthesizedStack, prefix: string) => ({
    'Fn::Join': ['', [{ 'Fn::GetAtt': [st.logicalId(st.stack.webhooks.archiveBucket), 'Arn'] }, prefix]],
  });
  const processorS3 = (st: SynthesizedStack) =>
    statementsOfRole(st.template, st.logicalId(st.stack.webhooks.processorFunction.role as never)).filter(
      (x) => JSON.stringify(x.Action).includes('s3:'),
    );

  it("lets the processor put and get objects under events/ of that bucket only, and list it (404, not 403, for a missing body); with Shopify served, delete there and write exports under compliance/ for Shopify's compliance topics", () => {
    expect(processorS3(s)).toEqual([
      {
        Action: 's3:ListBucket',
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.archiveBucket), 'Arn'] },
      },
      { Action: ['s3:PutObject', 's3:GetObject'], Effect: 'Allow', Resource: arn(s, '/events/*') },
      { Action: 's3:DeleteObject', Effect: 'Allow', Resource: arn(s, '/events/*') },
      { Action: ['s3:PutObject', 's3:DeleteObject'], Effect: 'Allow', Resource: arn(s, '/compliance/*') },
    ]);
  });

  it('never lets the processor delete from the archive when Shopify is not served', () => {
    const stripeOnly = synthesize({ props: { builtInProviders: ['stripe', 'github'] } });
    const statements = processorS3(stripeOnly);
    expect(statements).toHaveLength(2);
    expect(JSON.stringify(statements)).not.toMatch(/DeleteObject|compliance/);
  });

  it('expires compliance exports after 30 days by default, or complianceExportRetention', async () => {
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: 'compliance/', ExpirationInDays: 30, Status: 'Enabled' }),
        ]),
      },
    });
    const { Duration } = await import('aws-cdk-lib');
    synthesize({ props: { complianceExportRetention: Duration.days(7) } }).template.hasResourceProperties(
      'AWS::S3::Bucket',
      {
        LifecycleConfiguration: {
          Rules: Match.arrayWith([Match.objectLike({ Prefix: 'compliance/', ExpirationInDays: 7 })]),
        },
      },
    );
  });

  it('lets the receiver only put objects under events/ (claim checks), never read them', () => {
    const role = s.logicalId(s.stack.webhooks.receiverFunction.role as never);
    const s3Statements = statementsOfRole(s.template, role).filter((st) =>
      JSON.stringify(st.Action).includes('s3:'),
    );
    expect(s3Statements).toEqual([
      {
        Action: 's3:PutObject',
        Effect: 'Allow',
        Resource: {
          'Fn::Join': [
            '',
            [{ 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.archiveBucket), 'Arn'] }, '/events/*'],
          ],
        },
      },
    ]);
  });

  it('tells the receiver and the processor the bucket, and the receiver its claim-check threshold', () => {
    const resources = s.template.toJSON().Resources;
    const receiverEnv =
      resources[s.logicalId(s.stack.webhooks.receiverFunction)].Properties.Environment.Variables;
    const processorEnv =
      resources[s.logicalId(s.stack.webhooks.processorFunction)].Properties.Environment.Variables;
    const bucket = { Ref: s.logicalId(s.stack.webhooks.archiveBucket) };
    expect(receiverEnv).toMatchObject({ ARCHIVE_BUCKET_NAME: bucket, CLAIM_CHECK_THRESHOLD_BYTES: '458752' });
    expect(processorEnv).toMatchObject({ ARCHIVE_BUCKET_NAME: bucket });
  });
});
