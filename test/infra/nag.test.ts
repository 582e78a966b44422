/** cdk-nag's AWS Solutions rules: no unacknowledged finding, and every acknowledgement says why. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { type SynthesizedStack, synthesize } from './support.js';

type Finding = { rule: string; severity: string; resources: (string | undefined)[] };

function nagFindings(scope: IConstruct): Finding[] {
  return new AwsSolutionsChecks().validateScope(scope).violations.map((v) => ({
    rule: v.ruleName,
    severity: v.severity ?? 'unknown',
    resources: v.violatingResources.map((r) => r.constructPath),
  }));
}

function acknowledgements(scope: IConstruct): { path: string; id: string; reason: string }[] {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id,
          reason,
        })),
      ),
  );
}

describe('cdk-nag AwsSolutionsChecks', () => {
  let defaults: SynthesizedStack;
  let customized: SynthesizedStack;
  beforeAll(() => {
    defaults = synthesize({ cfnValidation: true });
    customized = synthesize({
      props: { alarmEmail: 'ops@example.com' },
      effectUrls: { ledger: 'https://ledger.example.com' },
    });
  });

  it('reports no error on the example stack', () => {
    expect(nagFindings(defaults.stack).filter((f) => f.severity === 'error')).toEqual([]);
  });

  it('reports no warning on the example stack', () => {
    expect(nagFindings(defaults.stack).filter((f) => f.severity !== 'error')).toEqual([]);
  });

  it('reports nothing with the optional props set (email subscription, ledger)', () => {
    expect(nagFindings(customized.stack)).toEqual([]);
  });

  it('acknowledges only the missing API authorizer, secret rotation, archive access logs and its object wildcard', () => {
    const ids = new Set(
      acknowledgements(defaults.stack).map((a) =>
        a.id.replace(/^annotation::/i, '').replace(/\[.*$/, '[...]'),
      ),
    );
    expect([...ids].sort()).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-IAM5[...]',
      'AwsSolutions-S1',
      'AwsSolutions-SMG4',
    ]);
  });

  it("passes CDK's built-in CloudFormation template validation without a finding", () => {
    const assembly = defaults.app.synth();
    const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8'));
    expect(report.pluginReports.flatMap((r: { violations: unknown[] }) => r.violations)).toEqual([]);
  });

  it('gives every acknowledgement a specific reason', () => {
    for (const { reason } of acknowledgements(defaults.stack)) expect(reason.length).toBeGreaterThan(80);
  });
});
