/**
 * Where s3rver (the local S3) differs from S3 in ways the pipeline meets, mended in this process
 * only, before a server starts (local/emulators.ts):
 *
 * - Writes are atomic. s3rver writes an object in place and answers a PUT before the bytes are on
 *   disk, so a GET during a PUT read part of an object, and two PUTs of one key at once left one's
 *   bytes followed by the tail of the other (found by `npm run soak`: a batch archive object two
 *   redactions rewrote at once no longer parsed). S3 shows a reader the old object or the new one.
 *   Here an object is written to a file beside it and renamed over it, and the PUT is answered after.
 * - Conditional writes are honoured. s3rver ignores `If-Match` on a PUT or DELETE (S3: `412
 *   PreconditionFailed` when the ETag differs, `404 NoSuchKey` when the object is gone), which the
 *   compliance store relies on so two redactions never lose each other's removals. Here a request for
 *   an object takes the key's turn (one at a time, so a read never meets a write half done), and a
 *   PUT or DELETE with `If-Match` is answered as S3 answers it.
 * - Listing tokens: s3rver ciphers the continuation token of a listing past one page with DES
 *   (`createCipheriv('des', ...)`), which OpenSSL 3 (Node 17 and later) keeps in its legacy
 *   provider: every such listing failed with `InternalError`. The token is opaque to clients and
 *   read back only by the same server, so `des` is mapped to AES-128-CBC with its 8-byte key and IV
 *   doubled. Only calls for `des` change; the process's other ciphers are untouched.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const require = createRequire(import.meta.url);

export function letS3rverCipherItsTokens(): void {
  type Factory = (algorithm: string, key: Buffer, iv: Buffer, ...rest: unknown[]) => unknown;
  const crypto = require('node:crypto') as {
    createCipheriv: Factory;
    createDecipheriv: Factory;
    s3rverTokens?: true;
  };
  if (crypto.s3rverTokens) return;
  const doubled = (bytes: Buffer) => Buffer.concat([bytes, bytes]);
  const aesForDes =
    (create: Factory): Factory =>
    (algorithm, key, iv, ...rest) =>
      algorithm === 'des'
        ? create('aes-128-cbc', doubled(key), doubled(iv))
        : create(algorithm, key, iv, ...rest);
  crypto.createCipheriv = aesForDes(crypto.createCipheriv);
  crypto.createDecipheriv = aesForDes(crypto.createDecipheriv);
  crypto.s3rverTokens = true;
}

interface StoredObject {
  readonly bucket: string;
  readonly key: string;
  readonly content: Buffer | NodeJS.ReadableStream;
  readonly metadata: Record<string, string>;
}

interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  getMetadata(bucket: string, key: string): Promise<{ etag: string }>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
  atomicWrites?: true;
}

/** s3rver's PUT, written to a file beside the object and renamed over it once whole. */
export function makeS3rverWritesAtomic(): void {
  const store = (require('s3rver/lib/stores/filesystem.js') as { prototype: FilesystemStore }).prototype;
  if (store.atomicWrites) return;
  store.putObject = async function putObject(this: FilesystemStore, object: StoredObject) {
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
    await mkdir(dirname(objectPath), { recursive: true });
    // Not named like an object (`._S3rver_object` at the end), so no listing shows it.
    const partial = `${objectPath}.${randomUUID()}.partial`;
    const md5 = createHash('md5');
    let size = 0;
    const source = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        md5.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    try {
      await pipeline(source, count, createWriteStream(partial));
      await rename(partial, objectPath);
    } finally {
      await rm(partial, { force: true });
    }
    const digest = md5.digest('hex');
    await this.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  };
  store.atomicWrites = true;
}

interface KoaContext {
  readonly method: string;
  readonly path: string;
  readonly querystring: string;
  get(header: string): string;
  status: number;
  type: string;
  body: unknown;
  set(header: string, value: string): void;
}

type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

interface S3rverApp {
  readonly store: FilesystemStore;
  readonly middleware: Middleware[];
}

/** The XML S3 answers an error with. */
function s3Error(ctx: KoaContext, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.set('x-amz-error-code', code);
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}

/**
 * One request for a key at a time, and `If-Match` on a PUT or DELETE of an object answered as S3 does.
 * Call before the server starts: the middleware goes just before s3rver's router.
 */
export function honourConditionalWrites(server: unknown): void {
  const app = server as S3rverApp;
  const turns = new Map<string, Promise<void>>();
  const conditional: Middleware = async (ctx, next) => {
    const [, bucket, ...rest] = ctx.path.split('/');
    // A request for the object itself: no sub-resource in the query (the SDK adds only `x-id`).
    // Reads take their turn too: s3rver reads an object's size, then opens it, and a rename in
    // between would answer the old length with the new bytes.
    const subresources = [...new URLSearchParams(ctx.querystring).keys()].filter((name) => name !== 'x-id');
    const isObjectRequest =
      ['PUT', 'DELETE', 'GET', 'HEAD'].includes(ctx.method) &&
      bucket &&
      rest.length > 0 &&
      subresources.length === 0;
    if (!isObjectRequest) return next();
    const key = decodeURIComponent(rest.join('/'));
    const id = `${bucket}/${key}`;
    const before = turns.get(id) ?? Promise.resolve();
    let done = () => {};
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const turn = before.then(() => mine);
    turns.set(id, turn);
    await before;
    try {
      const ifMatch = ctx.method === 'PUT' || ctx.method === 'DELETE' ? ctx.get('if-match') : '';
      if (ifMatch) {
        const etag = await app.store.getMetadata(bucket, key).then(
          (metadata) => metadata.etag,
          () => undefined,
        );
        if (etag === undefined) return s3Error(ctx, 404, 'NoSuchKey', 'The specified key does not exist.');
        const wanted = ifMatch.split(',').map((tag) => tag.trim());
        if (!wanted.includes(etag) && !wanted.includes('*'))
          return s3Error(
            ctx,
            412,
            'PreconditionFailed',
            'At least one of the pre-conditions you specified did not hold',
          );
      }
      await next();
    } finally {
      done();
      if (turns.get(id) === turn) turns.delete(id);
    }
  };
  // Before the router (the last middleware), after s3rver's logging and path handling.
  app.middleware.splice(app.middleware.length - 1, 0, conditional);
}
