/**
 * The payload archive: S3 objects of payloads and headers (signature values never included),
 * written by the receiver for a claim-checked body (one object for the event) and by the processor
 * for every other event (one object per batch), and expired by a lifecycle rule. Tiered retention: the
 * claim row stays small and lives for the provider's retry window; the payload lives here longer.
 */
import { type CfnElement, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ARCHIVE_PREFIX, COMPLIANCE_PREFIX } from '../../lambdas/shared/archive-layout.js';

export interface PayloadArchiveProps {
  /** How long archived payloads are kept. @default Duration.days(90) */
  readonly retention?: Duration;
  /** How long compliance exports (`compliance/`) are kept. @default Duration.days(30) */
  readonly complianceExportRetention?: Duration;
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

export class PayloadArchive extends Construct {
  public readonly bucket: s3.Bucket;
  /** How long objects are kept (the lifecycle rule's expiration). */
  public readonly retention: Duration;

  constructor(scope: Construct, id: string, props: PayloadArchiveProps = {}) {
    super(scope, id);
    this.retention = props.retention ?? Duration.days(90);
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      ...(props.removalPolicy === undefined ? {} : { removalPolicy: props.removalPolicy }),
      lifecycleRules: [
        {
          id: 'expire-archived-events',
          prefix: `${ARCHIVE_PREFIX}/`,
          expiration: this.retention,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        {
          id: 'expire-compliance-exports',
          prefix: `${COMPLIANCE_PREFIX}/`,
          expiration: props.complianceExportRetention ?? Duration.days(30),
        },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Access logging would need a second bucket that itself goes unlogged; reads of the archive are operator actions (webhooks inspect/replay) and are auditable with CloudTrail S3 data events where required.',
    });
  }
}

/**
 * Lets `role` use `actions` on the objects under the archive prefix of `bucket`, and acknowledges
 * cdk-nag's wildcard finding for it with `reason`: object names are per event, never known in advance.
 */
export function grantArchivePrefix(
  role: iam.Role,
  bucket: s3.IBucket,
  actions: readonly string[],
  reason: string,
  prefix: string = ARCHIVE_PREFIX,
): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: [...actions],
      resources: [bucket.arnForObjects(`${prefix}/*`)],
    }),
  );
  const bucketLogicalId = Stack.of(role).getLogicalId(bucket.node.defaultChild as CfnElement);
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/${prefix}/*]`,
    reason,
  });
}

/**
 * Lets `role` list the bucket. Without it S3 answers a GET of a missing object with 403 instead of
 * 404 (NoSuchKey), and "not stored" cannot be told from "denied" (the processor's log, the sweeper's
 * decision). https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html#API_GetObject_Permissions
 */
export function grantArchiveListing(role: iam.Role, bucket: s3.IBucket): void {
  role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
}
