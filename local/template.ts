/**
 * Reads a synthesized CDK app (cdk.out) and resolves the CloudFormation intrinsics the local stack
 * needs (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, pseudo parameters) against local resources.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DependsOn?: string | string[];
}

export interface CfnTemplate {
  readonly Resources: Record<string, CfnResource>;
  readonly Outputs?: Record<string, { readonly Value: unknown; readonly Description?: string }>;
}

export interface SynthesizedStack {
  readonly stackName: string;
  readonly template: CfnTemplate;
  readonly outdir: string;
}

interface Manifest {
  readonly artifacts?: Record<
    string,
    {
      readonly type: string;
      readonly properties?: {
        readonly templateFile?: string;
        readonly stackName?: string;
        /** A nested cloud assembly's directory (a Stage's stacks): `assembly-Prod`. */
        readonly directoryName?: string;
      };
      readonly displayName?: string;
    }
  >;
}

/** One stack of a cloud assembly, a Stage's nested assemblies included. */
export interface StackArtifact {
  /** The artifact id (`cdk synth`'s and `cdk deploy`'s stack selector). */
  readonly id: string;
  /** The CloudFormation stack name: what `cdk deploy --outputs-file` keys its outputs by. */
  readonly stackName: string;
  /** The construct path (`Prod/Payments`), which `cdk` also accepts. */
  readonly displayName: string;
  /** The assembly directory holding its template and its assets. */
  readonly outdir: string;
  readonly templateFile: string;
}

/** Every stack of the cloud assembly in `outdir`, in manifest order, nested assemblies' after their parent's. */
export function listStacks(outdir: string): StackArtifact[] {
  const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as Manifest;
  const stacks: StackArtifact[] = [];
  for (const [id, artifact] of Object.entries(manifest.artifacts ?? {})) {
    if (artifact.type === 'aws:cloudformation:stack') {
      stacks.push({
        id,
        stackName: artifact.properties?.stackName ?? id,
        displayName: artifact.displayName ?? id,
        outdir,
        templateFile: artifact.properties?.templateFile ?? `${id}.template.json`,
      });
    } else if (artifact.type === 'cdk:cloud-assembly' && artifact.properties?.directoryName) {
      stacks.push(...listStacks(join(outdir, artifact.properties.directoryName)));
    }
  }
  return stacks;
}

/** Whether `name` names the stack: its artifact id, stack name or construct path. */
export const stackNamed = (stack: StackArtifact, name: string): boolean =>
  stack.id === name || stack.stackName === name || stack.displayName === name;

export function readStackTemplate(stack: StackArtifact): CfnTemplate {
  return JSON.parse(readFileSync(join(stack.outdir, stack.templateFile), 'utf8')) as CfnTemplate;
}

export function readSynthesizedStack(outdir: string, stackName?: string): SynthesizedStack {
  const stacks = listStacks(outdir);
  const chosen = stackName ? stacks.find((stack) => stackNamed(stack, stackName)) : stacks[0];
  if (!chosen) throw new Error(`no stack ${stackName ?? ''} in ${outdir}/manifest.json`);
  return { stackName: chosen.stackName, template: readStackTemplate(chosen), outdir: chosen.outdir };
}

export function resourcesOfType(template: CfnTemplate, type: string): Array<[string, CfnResource]> {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

/** The local stand-in of each resource: what `Ref` returns and its attributes for `Fn::GetAtt`. */
export interface LocalResource {
  readonly ref: string;
  readonly attributes?: Readonly<Record<string, string>>;
}

export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'us-east-1';

const PSEUDO: Readonly<Record<string, string>> = {
  'AWS::Region': LOCAL_REGION,
  'AWS::AccountId': LOCAL_ACCOUNT,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::NoValue': '',
};

export class IntrinsicResolver {
  constructor(
    private readonly resources: ReadonlyMap<string, LocalResource>,
    private readonly stackName: string,
  ) {}

  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.resolve(v));
    if (typeof value !== 'object' || value === null) return value;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1) {
      const [fn] = keys as [string];
      const arg = record[fn];
      switch (fn) {
        case 'Ref':
          return this.ref(String(arg));
        case 'Fn::GetAtt': {
          const [id, attribute] = Array.isArray(arg) ? (arg as string[]) : String(arg).split('.');
          return this.getAtt(String(id), String(attribute));
        }
        case 'Fn::Join': {
          const [separator, parts] = arg as [string, unknown[]];
          return (this.resolve(parts) as unknown[]).map(String).join(separator);
        }
        case 'Fn::Sub': {
          const [text, variables] = Array.isArray(arg)
            ? (arg as [string, Record<string, unknown>])
            : [String(arg), {}];
          return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
            if (Object.hasOwn(variables, name)) return String(this.resolve(variables[name]));
            const [id, attribute] = name.split('.');
            return attribute ? this.getAtt(id ?? '', attribute) : this.ref(id ?? '');
          });
        }
        default:
          break;
      }
    }
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, this.resolve(v)]));
  }

  private ref(id: string): string {
    if (id === 'AWS::StackName') return this.stackName;
    if (Object.hasOwn(PSEUDO, id)) return PSEUDO[id] ?? '';
    const resource = this.resources.get(id);
    if (!resource) throw new Error(`the local stack cannot resolve Ref ${id}`);
    return resource.ref;
  }

  private getAtt(id: string, attribute: string): string {
    const value = this.resources.get(id)?.attributes?.[attribute];
    if (value === undefined) throw new Error(`the local stack cannot resolve Fn::GetAtt ${id}.${attribute}`);
    return value;
  }
}

/** The bundle directory of a function whose code is a file asset (`S3Key: <hash>.zip`). */
export function assetDirectory(outdir: string, code: unknown): string {
  const key = (code as { S3Key?: unknown } | undefined)?.S3Key;
  if (typeof key !== 'string') throw new Error('function code is not a file asset');
  const dir = join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
  if (!existsSync(dir)) throw new Error(`asset directory ${dir} is missing: synthesize again`);
  return dir;
}

/** `index.handler` -> the entry file in the asset directory and the export name. */
export function handlerEntry(dir: string, handler: string): { entry: string; exportName: string } {
  const dot = handler.lastIndexOf('.');
  const file = handler.slice(0, dot);
  const exportName = handler.slice(dot + 1);
  for (const extension of ['.mjs', '.js', '.cjs']) {
    const entry = join(dir, `${file}${extension}`);
    if (existsSync(entry)) return { entry, exportName };
  }
  throw new Error(`no ${file}.mjs/.js in ${dir}`);
}
