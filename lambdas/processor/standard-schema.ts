/**
 * The Standard Schema interface (https://standardschema.dev, v1), the part an applier's `schema`
 * needs. Copied rather than imported, as the spec invites, so the package has no dependency for it:
 * zod (3.24+, 4), valibot and arktype schemas all implement it.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardSchemaIssue[] };

export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** The schema's output type. */
export type InferSchemaOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];

/** `data.object.id: Required; type: Invalid input` : the issues in one line, for a claim's reason. */
export function describeIssues(issues: readonly StandardSchemaIssue[], max = 5): string {
  const shown = issues.slice(0, max).map((issue) => {
    const path = (issue.path ?? [])
      .map((segment) => String(typeof segment === 'object' ? segment.key : segment))
      .join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  const more = issues.length > max ? ` (and ${issues.length - max} more)` : '';
  return `${shown.join('; ')}${more}`;
}
