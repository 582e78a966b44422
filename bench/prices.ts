/**
 * AWS list prices used for the cost per million events: us-east-1 (N. Virginia), on demand, no free
 * tier, first volume tier. Check them against the pricing pages before relying on them; `checked`
 * says what this repository could confirm and how.
 */

export interface Price {
  readonly usd: number;
  readonly unit: string;
  readonly source: string;
  readonly checked: string;
}

export const PRICES_AS_OF = '2026-12-02';
export const PRICES_REGION = 'us-east-1';

export const PRICES = {
  apiGatewayHttpRequest: {
    usd: 1.0 / 1e6,
    unit: 'per HTTP API request (first 300 million a month; metered in 512 KB increments)',
    source: 'https://aws.amazon.com/api-gateway/pricing/',
    checked:
      'confirmed by several secondary pages (AWS whitepaper on HTTP API cost, pricing guides); not the AWS page itself',
  },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    unit: 'per GB-second, arm64 (first 7.5 billion GB-s a month), duration rounded up to 1 ms',
    source: 'https://aws.amazon.com/lambda/pricing/',
    checked: 'confirmed by secondary pricing guides; the AWS page excerpt seen states the 1 ms rounding',
  },
  lambdaRequest: {
    usd: 0.2 / 1e6,
    unit: 'per invocation',
    source: 'https://aws.amazon.com/lambda/pricing/',
    checked: 'confirmed by secondary pricing guides',
  },
  dynamoDbWriteRequestUnit: {
    usd: 0.625 / 1e6,
    unit: 'per on-demand write request unit (1 KB; transactional: 2 per KB), after the 1 Nov 2024 cut',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    checked:
      'confirmed by secondary pages describing the November 2024 50% reduction; not the AWS page itself',
  },
  dynamoDbReadRequestUnit: {
    usd: 0.125 / 1e6,
    unit: 'per on-demand read request unit (4 KB strongly consistent)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    checked: 'confirmed by secondary pages (as above)',
  },
  sqsStandardRequest: {
    usd: 0.4 / 1e6,
    unit: 'per standard-queue request (each 64 KB chunk of a payload is one request; first 100 billion a month)',
    source: 'https://aws.amazon.com/sqs/pricing/',
    checked: 'confirmed by several secondary pricing guides',
  },
  s3PutRequest: {
    usd: 0.005 / 1000,
    unit: 'per PUT request, S3 Standard',
    source: 'https://aws.amazon.com/s3/pricing/',
    checked: 'long-standing list price, seen in secondary pages; not confirmed against the AWS page here',
  },
  s3GetRequest: {
    usd: 0.0004 / 1000,
    unit: 'per GET request, S3 Standard',
    source: 'https://aws.amazon.com/s3/pricing/',
    checked: 'long-standing list price, seen in secondary pages; not confirmed against the AWS page here',
  },
  s3StandardGbMonth: {
    usd: 0.023,
    unit: 'per GB-month, S3 Standard (first 50 TB)',
    source: 'https://aws.amazon.com/s3/pricing/',
    checked: 'long-standing list price; not confirmed against the AWS page here',
  },
  cloudWatchLogsIngestedGb: {
    usd: 0.5,
    unit: 'per GB ingested, Standard class (first tier of the Lambda-logs tiered pricing of May 2025)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
    checked:
      'confirmed by secondary pages on the May 2025 Lambda log pricing; not part of the issue, shown separately',
  },
} as const satisfies Record<string, Price>;
