/**
 * DynamoDB in memory, at the wire: a request handler for the SDK's own `DynamoDBClient` that answers
 * the operations the processor sends (GetItem, PutItem, UpdateItem, TransactWriteItems, Scan,
 * CreateTable, DeleteTable) by evaluating their expressions, the very `ConditionExpression` and
 * `UpdateExpression` strings the claims and the business-table code write. Nothing of the
 * processor's conditions is restated here: a change to them is tested in memory as it is written.
 *
 * A subset of DynamoDB, for tests (the test processor's `dynamodb: 'memory'`): one partition key per
 * table, top-level attribute paths in updates, the functions `attribute_exists`,
 * `attribute_not_exists`, `attribute_type`, `begins_with`, `contains`, `size`, `if_not_exists` and
 * `list_append`. Like DynamoDB it refuses an expression name or value that no expression uses, and a
 * transaction that names one item twice. What it does not know, it refuses with a ValidationException
 * naming it, rather than guessing. DynamoDB Local remains the reference: the project's tests run the
 * same scenarios against both.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

type Item = Record<string, AttributeValue>;

class DynamoError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const validation = (message: string) => new DynamoError('ValidationException', message);

// ---- expressions -------------------------------------------------------------------------------

type Token =
  | { readonly kind: 'name'; readonly text: string }
  | { readonly kind: 'value'; readonly text: string }
  | { readonly kind: 'word'; readonly text: string }
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'op'; readonly text: string };

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const pattern =
    /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(<>|<=|>=|[=<>(),.[\]+-]))/y;
  let index = 0;
  while (index < expression.length) {
    if (/^\s*$/.test(expression.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(expression);
    if (!match)
      throw validation(`Invalid expression: unexpected text at ${JSON.stringify(expression.slice(index))}`);
    index = pattern.lastIndex;
    if (match[1]) tokens.push({ kind: 'name', text: match[1] });
    else if (match[2]) tokens.push({ kind: 'value', text: match[2] });
    else if (match[3]) tokens.push({ kind: 'word', text: match[3] });
    else if (match[4]) tokens.push({ kind: 'number', text: match[4] });
    else tokens.push({ kind: 'op', text: match[5] as string });
  }
  return tokens;
}

type PathPart = string | number;
type Operand =
  | { readonly kind: 'path'; readonly path: readonly PathPart[] }
  | { readonly kind: 'value'; readonly value: AttributeValue }
  | { readonly kind: 'size'; readonly path: readonly PathPart[] }
  | { readonly kind: 'if_not_exists'; readonly path: readonly PathPart[]; readonly fallback: Operand }
  | { readonly kind: 'list_append'; readonly first: Operand; readonly second: Operand }
  | { readonly kind: 'arith'; readonly op: '+' | '-'; readonly left: Operand; readonly right: Operand };

type Condition =
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'not'; readonly inner: Condition }
  | { readonly kind: 'compare'; readonly op: string; readonly left: Operand; readonly right: Operand }
  | { readonly kind: 'in'; readonly left: Operand; readonly list: readonly Operand[] }
  | { readonly kind: 'between'; readonly value: Operand; readonly low: Operand; readonly high: Operand }
  | { readonly kind: 'function'; readonly name: string; readonly args: readonly Operand[] };

/** The names and values a request gives its expressions, and which of them the expressions used. */
class Substitutions {
  readonly usedNames = new Set<string>();
  readonly usedValues = new Set<string>();
  constructor(
    readonly names: Readonly<Record<string, string>> = {},
    readonly values: Readonly<Record<string, AttributeValue>> = {},
  ) {}

  name(alias: string): string {
    const name = this.names[alias];
    if (name === undefined)
      throw validation(
        `An expression attribute name used in the document path is not defined; attribute name: ${alias}`,
      );
    this.usedNames.add(alias);
    return name;
  }

  value(alias: string): AttributeValue {
    const value = this.values[alias];
    if (value === undefined)
      throw validation(
        `An expression attribute value used in expression is not defined; attribute value: ${alias}`,
      );
    this.usedValues.add(alias);
    return value;
  }

  /** DynamoDB refuses names and values given but never used. */
  checkAllUsed(): void {
    const names = Object.keys(this.names).filter((alias) => !this.usedNames.has(alias));
    if (names.length > 0)
      throw validation(
        `Value provided in ExpressionAttributeNames unused in expressions: keys: {${names.join(', ')}}`,
      );
    const values = Object.keys(this.values).filter((alias) => !this.usedValues.has(alias));
    if (values.length > 0)
      throw validation(
        `Value provided in ExpressionAttributeValues unused in expressions: keys: {${values.join(', ')}}`,
      );
  }
}

class Parser {
  private index = 0;
  constructor(
    private readonly tokens: readonly Token[],
    private readonly subs: Substitutions,
    private readonly source: string,
  ) {}

  private peek(): Token | undefined {
    return this.tokens[this.index];
  }
  private next(): Token {
    const token = this.tokens[this.index++];
    if (token === undefined)
      throw validation(`Invalid expression: unexpected end of ${JSON.stringify(this.source)}`);
    return token;
  }
  private isWord(word: string): boolean {
    const token = this.peek();
    return token?.kind === 'word' && token.text.toUpperCase() === word;
  }
  private isOp(op: string): boolean {
    const token = this.peek();
    return token?.kind === 'op' && token.text === op;
  }
  private expectOp(op: string): void {
    const token = this.next();
    if (token.kind !== 'op' || token.text !== op)
      throw validation(
        `Invalid expression: expected ${op} near ${JSON.stringify(token.text)} in ${JSON.stringify(this.source)}`,
      );
  }
  done(): boolean {
    return this.index >= this.tokens.length;
  }

  condition(): Condition {
    let left = this.conjunction();
    while (this.isWord('OR')) {
      this.next();
      left = { kind: 'or', left, right: this.conjunction() };
    }
    return left;
  }

  private conjunction(): Condition {
    let left = this.negation();
    while (this.isWord('AND')) {
      this.next();
      left = { kind: 'and', left, right: this.negation() };
    }
    return left;
  }

  private negation(): Condition {
    if (this.isWord('NOT')) {
      this.next();
      return { kind: 'not', inner: this.negation() };
    }
    return this.primary();
  }

  private primary(): Condition {
    if (this.isOp('(')) {
      this.next();
      const inner = this.condition();
      this.expectOp(')');
      return inner;
    }
    const token = this.peek();
    const functions = [
      'attribute_exists',
      'attribute_not_exists',
      'attribute_type',
      'begins_with',
      'contains',
    ];
    if (token?.kind === 'word' && functions.includes(token.text)) {
      this.next();
      this.expectOp('(');
      const args = [this.operand()];
      while (this.isOp(',')) {
        this.next();
        args.push(this.operand());
      }
      this.expectOp(')');
      return { kind: 'function', name: token.text, args };
    }
    const left = this.operand();
    if (this.isWord('IN')) {
      this.next();
      this.expectOp('(');
      const list = [this.operand()];
      while (this.isOp(',')) {
        this.next();
        list.push(this.operand());
      }
      this.expectOp(')');
      return { kind: 'in', left, list };
    }
    if (this.isWord('BETWEEN')) {
      this.next();
      const low = this.operand();
      if (!this.isWord('AND'))
        throw validation(`Invalid expression: BETWEEN without AND in ${JSON.stringify(this.source)}`);
      this.next();
      return { kind: 'between', value: left, low, high: this.operand() };
    }
    const op = this.next();
    if (op.kind !== 'op' || !['=', '<>', '<', '<=', '>', '>='].includes(op.text))
      throw validation(
        `Invalid expression: expected a comparison near ${JSON.stringify(op.text)} in ${JSON.stringify(this.source)}`,
      );
    return { kind: 'compare', op: op.text, left, right: this.operand() };
  }

  path(): PathPart[] {
    const parts: PathPart[] = [this.pathName()];
    for (;;) {
      if (this.isOp('.')) {
        this.next();
        parts.push(this.pathName());
      } else if (this.isOp('[')) {
        this.next();
        const index = this.next();
        if (index.kind !== 'number')
          throw validation(
            `Invalid expression: a list index must be a number in ${JSON.stringify(this.source)}`,
          );
        this.expectOp(']');
        parts.push(Number(index.text));
      } else return parts;
    }
  }

  private pathName(): string {
    const token = this.next();
    if (token.kind === 'name') return this.subs.name(token.text);
    if (token.kind === 'word') return token.text;
    throw validation(
      `Invalid expression: expected an attribute name near ${JSON.stringify(token.text)} in ${JSON.stringify(this.source)}`,
    );
  }

  operand(): Operand {
    const token = this.peek();
    if (token?.kind === 'value') {
      this.next();
      return { kind: 'value', value: this.subs.value(token.text) };
    }
    if (token?.kind === 'word' && ['size', 'if_not_exists', 'list_append'].includes(token.text)) {
      const after = this.tokens[this.index + 1];
      if (after?.kind === 'op' && after.text === '(') {
        this.next();
        this.next();
        let operand: Operand;
        if (token.text === 'size') operand = { kind: 'size', path: this.path() };
        else if (token.text === 'if_not_exists') {
          const path = this.path();
          this.expectOp(',');
          operand = { kind: 'if_not_exists', path, fallback: this.operand() };
        } else {
          const first = this.operand();
          this.expectOp(',');
          operand = { kind: 'list_append', first, second: this.operand() };
        }
        this.expectOp(')');
        return operand;
      }
    }
    return { kind: 'path', path: this.path() };
  }

  /** A SET action's value: an operand, or two joined by + or -. */
  setValue(): Operand {
    const left = this.operand();
    if (this.isOp('+') || this.isOp('-')) {
      const op = this.next().text as '+' | '-';
      return { kind: 'arith', op, left, right: this.operand() };
    }
    return left;
  }

  update(): UpdateAction[] {
    const actions: UpdateAction[] = [];
    const seen = new Set<string>();
    while (!this.done()) {
      const clause = this.next();
      const word = clause.kind === 'word' ? clause.text.toUpperCase() : '';
      if (!['SET', 'REMOVE', 'ADD', 'DELETE'].includes(word))
        throw validation(
          `Invalid UpdateExpression: expected SET, REMOVE, ADD or DELETE near ${JSON.stringify(clause.text)}`,
        );
      if (seen.has(word))
        throw validation(
          `Invalid UpdateExpression: The "${word}" section can only be used once in an update expression`,
        );
      seen.add(word);
      for (;;) {
        const path = this.path();
        if (word === 'SET') {
          this.expectOp('=');
          actions.push({ kind: 'set', path, value: this.setValue() });
        } else if (word === 'REMOVE') actions.push({ kind: 'remove', path });
        else actions.push({ kind: word === 'ADD' ? 'add' : 'delete', path, value: this.operand() });
        if (!this.isOp(',')) break;
        this.next();
      }
    }
    // One path may be changed once: no two actions may name it, or one of them a part of the other.
    for (const [index, action] of actions.entries()) {
      for (const other of actions.slice(index + 1)) {
        const shorter = Math.min(action.path.length, other.path.length);
        if (action.path.slice(0, shorter).every((part, i) => part === other.path[i]))
          throw validation(
            `Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [${action.path.join(', ')}], path two: [${other.path.join(', ')}]`,
          );
      }
    }
    return actions;
  }
}

type UpdateAction =
  | { readonly kind: 'set'; readonly path: readonly PathPart[]; readonly value: Operand }
  | { readonly kind: 'remove'; readonly path: readonly PathPart[] }
  | { readonly kind: 'add' | 'delete'; readonly path: readonly PathPart[]; readonly value: Operand };

function parseCondition(expression: string, subs: Substitutions): Condition {
  const parser = new Parser(tokenize(expression), subs, expression);
  const condition = parser.condition();
  if (!parser.done())
    throw validation(`Invalid ConditionExpression: unexpected text in ${JSON.stringify(expression)}`);
  return condition;
}

function parseUpdate(expression: string, subs: Substitutions): UpdateAction[] {
  return new Parser(tokenize(expression), subs, expression).update();
}

// ---- values ------------------------------------------------------------------------------------

function typeOf(value: AttributeValue): string {
  return (
    Object.keys(value).find((key) => (value as unknown as Record<string, unknown>)[key] !== undefined) ??
    'NULL'
  );
}

function getPath(item: Item | undefined, path: readonly PathPart[]): AttributeValue | undefined {
  let current: AttributeValue | undefined = item === undefined ? undefined : { M: item };
  for (const part of path) {
    if (current === undefined) return undefined;
    if (typeof part === 'number') current = current.L?.[part];
    else current = current.M?.[part];
  }
  return current;
}

function bytesOf(value: AttributeValue): Buffer {
  return Buffer.from(value.B as Uint8Array);
}

/** Ordering of two scalars of the same type (N, S, B); undefined when they cannot be ordered. */
function order(a: AttributeValue, b: AttributeValue): number | undefined {
  const type = typeOf(a);
  if (type !== typeOf(b)) return undefined;
  if (type === 'N') return Math.sign(Number(a.N) - Number(b.N));
  if (type === 'S') return Buffer.compare(Buffer.from(a.S as string), Buffer.from(b.S as string));
  if (type === 'B') return Buffer.compare(bytesOf(a), bytesOf(b));
  return undefined;
}

function equal(a: AttributeValue, b: AttributeValue): boolean {
  const type = typeOf(a);
  if (type !== typeOf(b)) return false;
  switch (type) {
    case 'N':
      return Number(a.N) === Number(b.N);
    case 'S':
      return a.S === b.S;
    case 'B':
      return bytesOf(a).equals(bytesOf(b));
    case 'BOOL':
      return a.BOOL === b.BOOL;
    case 'NULL':
      return true;
    case 'SS':
    case 'NS':
    case 'BS': {
      const left = setMembers(a);
      const right = setMembers(b);
      return left.length === right.length && left.every((member) => right.includes(member));
    }
    case 'L':
      return (
        a.L?.length === b.L?.length &&
        (a.L ?? []).every((value, index) => equal(value, b.L?.[index] as AttributeValue))
      );
    case 'M': {
      const left = a.M ?? {};
      const right = b.M ?? {};
      const keys = Object.keys(left);
      return (
        keys.length === Object.keys(right).length &&
        keys.every(
          (key) =>
            right[key] !== undefined && equal(left[key] as AttributeValue, right[key] as AttributeValue),
        )
      );
    }
    default:
      return false;
  }
}

/** A set's members as comparable strings (numbers normalised, bytes base64). */
function setMembers(value: AttributeValue): string[] {
  if (value.SS) return [...value.SS];
  if (value.NS) return value.NS.map((n) => String(Number(n)));
  if (value.BS) return value.BS.map((b) => Buffer.from(b).toString('base64'));
  return [];
}

function sizeOf(value: AttributeValue): number | undefined {
  switch (typeOf(value)) {
    case 'S':
      return Buffer.byteLength(value.S as string);
    case 'B':
      return bytesOf(value).length;
    case 'SS':
    case 'NS':
    case 'BS':
      return setMembers(value).length;
    case 'L':
      return value.L?.length;
    case 'M':
      return Object.keys(value.M ?? {}).length;
    default:
      return undefined;
  }
}

function operandValue(operand: Operand, item: Item | undefined): AttributeValue | undefined {
  switch (operand.kind) {
    case 'value':
      return operand.value;
    case 'path':
      return getPath(item, operand.path);
    case 'size': {
      const target = getPath(item, operand.path);
      const size = target === undefined ? undefined : sizeOf(target);
      return size === undefined ? undefined : { N: String(size) };
    }
    case 'if_not_exists':
      return getPath(item, operand.path) ?? operandValue(operand.fallback, item);
    case 'list_append': {
      const first = operandValue(operand.first, item);
      const second = operandValue(operand.second, item);
      if (first?.L === undefined || second?.L === undefined)
        throw validation(
          'Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append',
        );
      return { L: [...first.L, ...second.L] };
    }
    case 'arith': {
      const left = operandValue(operand.left, item);
      const right = operandValue(operand.right, item);
      if (left?.N === undefined || right?.N === undefined)
        throw validation(
          `The provided expression refers to an attribute that does not exist in the item, or an operand is not a number (operator ${operand.op})`,
        );
      const result = operand.op === '+' ? Number(left.N) + Number(right.N) : Number(left.N) - Number(right.N);
      return { N: String(result) };
    }
  }
}

function holds(condition: Condition, item: Item | undefined): boolean {
  switch (condition.kind) {
    case 'and':
      return holds(condition.left, item) && holds(condition.right, item);
    case 'or':
      return holds(condition.left, item) || holds(condition.right, item);
    case 'not':
      return !holds(condition.inner, item);
    case 'in': {
      const left = operandValue(condition.left, item);
      return (
        left !== undefined &&
        condition.list.some((candidate) => {
          const value = operandValue(candidate, item);
          return value !== undefined && equal(left, value);
        })
      );
    }
    case 'between': {
      const value = operandValue(condition.value, item);
      const low = operandValue(condition.low, item);
      const high = operandValue(condition.high, item);
      if (value === undefined || low === undefined || high === undefined) return false;
      const above = order(value, low);
      const below = order(value, high);
      return above !== undefined && below !== undefined && above >= 0 && below <= 0;
    }
    case 'compare': {
      const left = operandValue(condition.left, item);
      const right = operandValue(condition.right, item);
      if (left === undefined || right === undefined) return false;
      if (condition.op === '=') return equal(left, right);
      if (condition.op === '<>') return !equal(left, right);
      const sign = order(left, right);
      if (sign === undefined) return false;
      switch (condition.op) {
        case '<':
          return sign < 0;
        case '<=':
          return sign <= 0;
        case '>':
          return sign > 0;
        default:
          return sign >= 0;
      }
    }
    case 'function': {
      const [first, second] = condition.args;
      const pathOf = (operand: Operand | undefined) => {
        if (operand?.kind !== 'path')
          throw validation(`Invalid ConditionExpression: ${condition.name} takes a document path`);
        return operand.path;
      };
      switch (condition.name) {
        case 'attribute_exists':
          return getPath(item, pathOf(first)) !== undefined;
        case 'attribute_not_exists':
          return getPath(item, pathOf(first)) === undefined;
        case 'attribute_type': {
          const value = getPath(item, pathOf(first));
          const type = second === undefined ? undefined : operandValue(second, item)?.S;
          return value !== undefined && typeOf(value) === type;
        }
        case 'begins_with': {
          const value = getPath(item, pathOf(first));
          const prefix = second === undefined ? undefined : operandValue(second, item);
          if (value?.S !== undefined && prefix?.S !== undefined) return value.S.startsWith(prefix.S);
          if (value?.B !== undefined && prefix?.B !== undefined)
            return bytesOf(value).subarray(0, bytesOf(prefix).length).equals(bytesOf(prefix));
          return false;
        }
        default: {
          // contains
          const value = getPath(item, pathOf(first));
          const operand = second === undefined ? undefined : operandValue(second, item);
          if (value === undefined || operand === undefined) return false;
          if (value.S !== undefined) return operand.S !== undefined && value.S.includes(operand.S);
          if (value.L !== undefined) return value.L.some((member) => equal(member, operand));
          if (value.SS || value.NS || value.BS)
            return setMembers(value).some((m) => setMembers(setOf(operand)).includes(m));
          return false;
        }
      }
    }
  }
}

/** A scalar as the one-member set of its type (for `contains` on a set). */
function setOf(value: AttributeValue): AttributeValue {
  if (value.S !== undefined) return { SS: [value.S] };
  if (value.N !== undefined) return { NS: [value.N] };
  if (value.B !== undefined) return { BS: [value.B] };
  return value;
}

function topLevel(path: readonly PathPart[]): string {
  const [name, ...rest] = path;
  if (typeof name !== 'string' || rest.length > 0)
    throw validation(
      'the in-memory DynamoDB updates top-level attributes only: use DynamoDB Local for nested paths',
    );
  return name;
}

function applyUpdate(actions: readonly UpdateAction[], before: Item | undefined, key: Item): Item {
  const item: Item = { ...structuredClone(before ?? {}), ...key };
  for (const action of actions) {
    const name = topLevel(action.path);
    if (Object.hasOwn(key, name))
      throw validation(
        `One or more parameter values were invalid: Cannot update attribute ${name}. This attribute is part of the key`,
      );
    if (action.kind === 'remove') {
      delete item[name];
      continue;
    }
    // Every operand reads the item as it was before the update.
    const value = operandValue(action.value, before);
    if (value === undefined)
      throw validation('The provided expression refers to an attribute that does not exist in the item');
    if (action.kind === 'set') item[name] = value;
    else if (action.kind === 'add') {
      const current = item[name];
      if (value.N !== undefined) {
        if (current !== undefined && current.N === undefined)
          throw validation(`An operand in the update expression has an incorrect data type (ADD ${name})`);
        item[name] = { N: String(Number(current?.N ?? 0) + Number(value.N)) };
      } else if (value.SS || value.NS || value.BS) item[name] = unionSets(current, value);
      else
        throw validation(
          `Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: ${typeOf(value)}`,
        );
    } else {
      const current = item[name];
      if (current === undefined) continue;
      const removed = new Set(setMembers(value));
      const kept = setFrom(
        current,
        setMembers(current).filter((member) => !removed.has(member)),
      );
      if (kept === undefined) delete item[name];
      else item[name] = kept;
    }
  }
  return item;
}

function unionSets(current: AttributeValue | undefined, added: AttributeValue): AttributeValue {
  if (current === undefined) return added;
  if (typeOf(current) !== typeOf(added))
    throw validation('An operand in the update expression has an incorrect data type (ADD to a set)');
  const members = [...new Set([...setMembers(current), ...setMembers(added)])];
  return setFrom(added, members) as AttributeValue;
}

/** A set of `like`'s type with `members` (comparable strings); undefined when empty (DynamoDB drops it). */
function setFrom(like: AttributeValue, members: readonly string[]): AttributeValue | undefined {
  if (members.length === 0) return undefined;
  if (like.SS) return { SS: [...members] };
  if (like.NS) return { NS: [...members] };
  return { BS: members.map((m) => Buffer.from(m, 'base64')) };
}

// ---- operations --------------------------------------------------------------------------------

interface Table {
  readonly keyName: string;
  readonly items: Map<string, Item>;
}

interface WriteRequest {
  readonly TableName: string;
  readonly Key?: Item;
  readonly Item?: Item;
  readonly UpdateExpression?: string;
  readonly ConditionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, AttributeValue>;
  readonly ReturnValues?: string;
  readonly ReturnValuesOnConditionCheckFailure?: string;
}

/** A write checked and ready: `apply` commits it; `failed` says its condition did not hold. */
interface PreparedWrite {
  readonly tableName: string;
  readonly table: Table;
  readonly id: string;
  readonly before: Item | undefined;
  readonly after: Item | undefined;
  readonly failed: boolean;
}

export class MemoryDynamoDb {
  private readonly tables = new Map<string, Table>();

  private table(name: string): Table {
    const table = this.tables.get(name);
    if (!table) throw new DynamoError('ResourceNotFoundException', 'Requested resource not found');
    return table;
  }

  private keyOf(table: Table, key: Item | undefined): { id: string; key: Item } {
    const value = key?.[table.keyName];
    if (key === undefined || value === undefined || Object.keys(key).length !== 1)
      throw validation('The provided key element does not match the schema');
    const scalar = value.S ?? value.N ?? (value.B ? Buffer.from(value.B).toString('base64') : undefined);
    if (scalar === undefined || scalar === '')
      throw validation(
        'One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value.',
      );
    return { id: `${typeOf(value)}:${scalar}`, key: { [table.keyName]: value } };
  }

  /** Evaluates one write against the current items, changing nothing. */
  private prepare(kind: 'put' | 'update' | 'delete' | 'check', request: WriteRequest): PreparedWrite {
    const table = this.table(request.TableName);
    const { id, key } = this.keyOf(table, kind === 'put' ? pick(request.Item, table.keyName) : request.Key);
    const before = table.items.get(id);
    for (const [field, given] of [
      ['ExpressionAttributeNames', request.ExpressionAttributeNames],
      ['ExpressionAttributeValues', request.ExpressionAttributeValues],
    ] as const)
      if (given !== undefined && Object.keys(given).length === 0)
        throw validation(`${field} must not be empty`);
    const subs = new Substitutions(request.ExpressionAttributeNames, request.ExpressionAttributeValues);
    const condition =
      request.ConditionExpression === undefined
        ? undefined
        : parseCondition(request.ConditionExpression, subs);
    let after: Item | undefined = before;
    if (kind === 'update')
      after = applyUpdate(
        request.UpdateExpression === undefined ? [] : parseUpdate(request.UpdateExpression, subs),
        before,
        key,
      );
    else if (kind === 'put') after = structuredClone(request.Item as Item);
    else if (kind === 'delete') after = undefined;
    subs.checkAllUsed();
    if (kind === 'check' && condition === undefined)
      throw validation('ConditionCheck needs a ConditionExpression');
    return {
      tableName: request.TableName,
      table,
      id,
      before,
      after,
      failed: condition !== undefined && !holds(condition, before),
    };
  }

  private commit(write: PreparedWrite): void {
    if (write.after === undefined) write.table.items.delete(write.id);
    else write.table.items.set(write.id, write.after);
  }

  private single(kind: 'put' | 'update' | 'delete', request: WriteRequest): Record<string, unknown> {
    const write = this.prepare(kind, request);
    if (write.failed)
      throw new DynamoError(
        'ConditionalCheckFailedException',
        'The conditional request failed',
        request.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && write.before
          ? { Item: write.before }
          : {},
      );
    this.commit(write);
    const returns = request.ReturnValues ?? 'NONE';
    if (returns === 'NONE') return {};
    if (returns === 'ALL_NEW') return write.after ? { Attributes: write.after } : {};
    if (returns === 'ALL_OLD') return write.before ? { Attributes: write.before } : {};
    throw validation(`the in-memory DynamoDB does not return ${returns}: use DynamoDB Local`);
  }

  handle(operation: string, input: Record<string, unknown>): Record<string, unknown> {
    switch (operation) {
      case 'CreateTable': {
        const name = input.TableName as string;
        if (this.tables.has(name))
          throw new DynamoError('ResourceInUseException', `Table already exists: ${name}`);
        const schema = input.KeySchema as { AttributeName: string; KeyType: string }[];
        const hash = schema.find((key) => key.KeyType === 'HASH');
        if (!hash || schema.length !== 1)
          throw validation('the in-memory DynamoDB has tables with a partition key only');
        this.tables.set(name, { keyName: hash.AttributeName, items: new Map() });
        return { TableDescription: { TableName: name, TableStatus: 'ACTIVE', KeySchema: schema } };
      }
      case 'DeleteTable': {
        const name = input.TableName as string;
        this.table(name);
        this.tables.delete(name);
        return { TableDescription: { TableName: name, TableStatus: 'DELETING' } };
      }
      case 'GetItem': {
        const table = this.table(input.TableName as string);
        if (input.ProjectionExpression !== undefined)
          throw validation('the in-memory DynamoDB has no projections: use DynamoDB Local');
        const item = table.items.get(this.keyOf(table, input.Key as Item).id);
        return item ? { Item: item } : {};
      }
      case 'Scan': {
        const table = this.table(input.TableName as string);
        if (input.FilterExpression !== undefined || input.ProjectionExpression !== undefined)
          throw validation('the in-memory DynamoDB scans whole tables only: use DynamoDB Local');
        const items = [...table.items.values()];
        return { Items: items, Count: items.length, ScannedCount: items.length };
      }
      case 'PutItem':
        return this.single('put', input as unknown as WriteRequest);
      case 'UpdateItem':
        return this.single('update', input as unknown as WriteRequest);
      case 'DeleteItem':
        return this.single('delete', input as unknown as WriteRequest);
      case 'TransactWriteItems':
        return this.transact(input.TransactItems as Record<string, WriteRequest>[]);
      default:
        throw new DynamoError(
          'UnknownOperationException',
          `the in-memory DynamoDB does not do ${operation}: use DynamoDB Local`,
        );
    }
  }

  private transact(items: readonly Record<string, WriteRequest>[]): Record<string, unknown> {
    const kinds = { Put: 'put', Update: 'update', Delete: 'delete', ConditionCheck: 'check' } as const;
    const writes = items.map((entry) => {
      const [kind, request] = Object.entries(entry).find(([, value]) => value !== undefined) ?? [];
      if (kind === undefined || request === undefined || !(kind in kinds))
        throw validation('Invalid TransactItems entry');
      return { request, write: this.prepare(kinds[kind as keyof typeof kinds], request) };
    });
    const ids = writes.map(({ write }) => `${write.tableName}/${write.id}`);
    if (new Set(ids).size !== ids.length)
      throw validation('Transaction request cannot include multiple operations on one item');
    if (writes.some(({ write }) => write.failed)) {
      const reasons = writes.map(({ request, write }) =>
        write.failed
          ? {
              Code: 'ConditionalCheckFailed',
              Message: 'The conditional request failed',
              ...(request.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && write.before
                ? { Item: write.before }
                : {}),
            }
          : { Code: 'None' },
      );
      throw new DynamoError(
        'TransactionCanceledException',
        `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
        { CancellationReasons: reasons },
      );
    }
    for (const { write } of writes) this.commit(write);
    return {};
  }
}

function pick(item: Item | undefined, name: string): Item | undefined {
  const value = item?.[name];
  return value === undefined ? undefined : { [name]: value };
}

// ---- the SDK's side ----------------------------------------------------------------------------

interface WireRequest {
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}

/** JSON with the SDK's binary values (Uint8Array) as base64, as DynamoDB's wire format has them. */
function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v instanceof Uint8Array || (v && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer')
      ? Buffer.from(v instanceof Uint8Array ? v : ((v as { data: number[] }).data ?? [])).toString('base64')
      : v,
  );
}

/** Binary values in a request (base64 on the wire) as bytes again. */
function fromWire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fromWire);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([key, v]) => {
    if (key === 'B' && typeof v === 'string') return [key, Buffer.from(v, 'base64')];
    if (key === 'BS' && Array.isArray(v)) return [key, v.map((b) => Buffer.from(String(b), 'base64'))];
    return [key, fromWire(v)];
  });
  return Object.fromEntries(entries);
}

/** The handler the SDK sends its HTTP requests to: answered from `database`, in DynamoDB's JSON. */
export function memoryRequestHandler(database: MemoryDynamoDb) {
  const respond = (statusCode: number, body: unknown) => ({
    response: {
      statusCode,
      reason: statusCode === 200 ? 'OK' : 'Bad Request',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'memory' },
      body: Buffer.from(toJson(body)),
    },
  });
  return {
    metadata: { handlerProtocol: 'h1' },
    async handle(request: WireRequest) {
      const target = request.headers['x-amz-target'] ?? request.headers['X-Amz-Target'] ?? '';
      const operation = target.split('.').at(-1) ?? '';
      const raw = request.body;
      const text =
        typeof raw === 'string'
          ? raw
          : raw instanceof Uint8Array
            ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8')
            : '{}';
      try {
        return respond(
          200,
          database.handle(operation, fromWire(JSON.parse(text || '{}')) as Record<string, unknown>),
        );
      } catch (error) {
        if (error instanceof DynamoError)
          return respond(400, {
            __type: `com.amazonaws.dynamodb.v20120810#${error.type}`,
            message: error.message,
            ...error.extra,
          });
        throw error;
      }
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {};
    },
    destroy() {},
  };
}

/** A `DynamoDBClient` whose requests are answered in memory, by a database of its own. */
export function memoryDynamoDbClient(database: MemoryDynamoDb = new MemoryDynamoDb()): DynamoDBClient {
  return new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://dynamodb.memory.invalid',
    credentials: { accessKeyId: 'memory', secretAccessKey: 'memory' },
    maxAttempts: 1,
    requestHandler: memoryRequestHandler(database) as unknown as DynamoDBClient['config']['requestHandler'],
  });
}
