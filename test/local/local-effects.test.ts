/**
 * The processor's effect adapters as `npm start` runs them (localEnvironment in local/stack.ts):
 * each calls the effects sink unless LOCAL_REAL_EFFECTS names it; a header read from a secret gets
 * its value from EFFECT_SECRET_<ADAPTER> or a development value, since Secrets Manager is not emulated.
 */
import { describe, expect, it, vi } from 'vitest';
import * as processorSettings from '../../lambdas/processor/settings.js';
import type { EffectsSink } from '../../local/effects-sink.js';
import { LOCAL_ENV } from '../../local/settings.js';
import { localEnvironment } from '../../local/stack.js';

type Json = Record<string, unknown>;

const SINK_URL = 'http://127.0.0.1:4999';
const EFFECTS = processorSettings.ENV.effects;
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:crm-token-AbCdEf';

function fakeSink(): EffectsSink {
  return {
    url: SINK_URL,
    urlOf: (service) => `${SINK_URL}/${service}`,
    declare: vi.fn(),
    entries: () => [],
    failNext: () => undefined,
    fault: () => undefined,
    clearFaults: () => undefined,
    stop: async () => undefined,
  };
}

/** The processor's `EFFECTS` as the local run gives it, from the template's `effects`. */
function localEffects(
  effects: Json,
  env: NodeJS.ProcessEnv = {},
  sink: EffectsSink = fakeSink(),
): Record<string, Json> {
  const variables = localEnvironment({ [EFFECTS]: JSON.stringify(effects) }, env, {
    dynamoEndpoint: 'http://127.0.0.1:8000',
    sqsEndpoint: 'http://127.0.0.1:9324',
    s3Endpoint: 'http://127.0.0.1:4569',
    sink,
    functionName: 'processor',
    leaseOverride: undefined,
    maxReceiveOverride: undefined,
    faultStateDirectory: '/tmp/faults',
  });
  return JSON.parse(variables[EFFECTS] as string) as Record<string, Json>;
}

const CRM = { url: 'https://crm.example.com/hooks', honoursIdempotencyKey: true };
const ERP = { url: 'https://erp.example.com/hooks', honoursIdempotencyKey: false };

describe('local effect URLs', () => {
  it('sends an adapter with a URL of its own to the effects sink by default, declared there', () => {
    const sink = fakeSink();
    expect(localEffects({ crm: CRM }, {}, sink).crm?.url).toBe(`${SINK_URL}/crm`);
    expect(sink.declare).toHaveBeenCalledWith('crm', true);
  });

  it('keeps the URL of an adapter LOCAL_REAL_EFFECTS names, and does not declare it to the sink', () => {
    const sink = fakeSink();
    expect(localEffects({ crm: CRM }, { [LOCAL_ENV.realEffects]: 'crm' }, sink).crm?.url).toBe(CRM.url);
    expect(sink.declare).not.toHaveBeenCalled();
  });

  it('keeps the URL of every adapter with one when LOCAL_REAL_EFFECTS is *', () => {
    const effects = localEffects({ crm: CRM, erp: ERP, notify: {} }, { [LOCAL_ENV.realEffects]: '*' });
    expect(effects.crm?.url).toBe(CRM.url);
    expect(effects.erp?.url).toBe(ERP.url);
    // An adapter with no URL has nowhere else to go.
    expect(effects.notify?.url).toBe(`${SINK_URL}/notify`);
  });

  it('sends an adapter LOCAL_REAL_EFFECTS does not name to the sink (names comma-separated, spaces ignored)', () => {
    const sink = fakeSink();
    const effects = localEffects(
      { crm: CRM, erp: ERP, mailer: { url: 'https://mail.example.com' } },
      { [LOCAL_ENV.realEffects]: ' crm , mailer ' },
      sink,
    );
    expect(effects.crm?.url).toBe(CRM.url);
    expect(effects.mailer?.url).toBe('https://mail.example.com');
    expect(effects.erp?.url).toBe(`${SINK_URL}/erp`);
    expect(sink.declare).toHaveBeenCalledTimes(1);
    expect(sink.declare).toHaveBeenCalledWith('erp', false);
  });
});

describe('local effect headers', () => {
  const crmWith = (headers: Json) => ({ crm: { ...CRM, headers } });
  const bearer = { secretArn: SECRET_ARN, jsonField: 'token', prefix: 'Bearer ' };

  it('gives a secret header the development value local-dev-<adapter>-<jsonField>, after its prefix', () => {
    expect(localEffects(crmWith({ authorization: bearer })).crm?.headers).toEqual({
      authorization: { value: 'Bearer local-dev-crm-token' },
    });
  });

  it('gives a secret header with no JSON field or prefix the development value local-dev-<adapter>', () => {
    expect(localEffects(crmWith({ 'x-api-key': { secretArn: SECRET_ARN } })).crm?.headers).toEqual({
      'x-api-key': { value: 'local-dev-crm' },
    });
  });

  it('takes a secret header from EFFECT_SECRET_<ADAPTER> when it is set', () => {
    const headers = { authorization: { secretArn: SECRET_ARN, prefix: 'Bearer ' } };
    expect(localEffects(crmWith(headers), { EFFECT_SECRET_CRM: 'tok-123' }).crm?.headers).toEqual({
      authorization: { value: 'Bearer tok-123' },
    });
  });

  it("takes the header's JSON field of EFFECT_SECRET_<ADAPTER> when it has one", () => {
    const env = { EFFECT_SECRET_CRM: JSON.stringify({ token: 'tok-456', user: 'svc' }) };
    expect(localEffects(crmWith({ authorization: bearer }), env).crm?.headers).toEqual({
      authorization: { value: 'Bearer tok-456' },
    });
  });

  it("reads only the adapter's own variable", () => {
    const effects = localEffects(
      {
        crm: { ...CRM, headers: { authorization: bearer } },
        erp: { ...ERP, headers: { authorization: bearer } },
      },
      { EFFECT_SECRET_CRM: JSON.stringify({ token: 'crm-only' }) },
    );
    expect(effects.crm?.headers).toEqual({ authorization: { value: 'Bearer crm-only' } });
    expect(effects.erp?.headers).toEqual({ authorization: { value: 'Bearer local-dev-erp-token' } });
  });

  it('passes static headers through unchanged, beside secret ones', () => {
    const effects = localEffects(
      crmWith({ 'x-api-version': { value: '2024-06-01' }, authorization: bearer }),
      { EFFECT_SECRET_CRM: JSON.stringify({ token: 't' }) },
    );
    expect(effects.crm?.headers).toEqual({
      'x-api-version': { value: '2024-06-01' },
      authorization: { value: 'Bearer t' },
    });
  });

  it('gives secret headers their local value when the adapter calls its real URL too', () => {
    const effects = localEffects(crmWith({ authorization: bearer }), {
      [LOCAL_ENV.realEffects]: 'crm',
      EFFECT_SECRET_CRM: JSON.stringify({ token: 'real-token' }),
    });
    expect(effects.crm).toMatchObject({
      url: CRM.url,
      headers: { authorization: { value: 'Bearer real-token' } },
    });
  });
});

describe('local effect settings refused in one line', () => {
  it('refuses LOCAL_REAL_EFFECTS naming an adapter the stack does not have', () => {
    expect(() => localEffects({ crm: CRM }, { [LOCAL_ENV.realEffects]: 'crn' })).toThrow(
      /^LOCAL_REAL_EFFECTS names crn, which the stack has no effect adapter of \(it has crm\)$/,
    );
  });

  it('refuses to send a development credential to a real URL', () => {
    const secretHeader = { headers: { authorization: { secretArn: SECRET_ARN, prefix: 'Bearer ' } } };
    expect(() =>
      localEffects({ crm: { ...CRM, ...secretHeader } }, { [LOCAL_ENV.realEffects]: 'crm' }),
    ).toThrow(
      /sends crm to https:\/\/crm\.example\.com\/hooks, whose header authorization comes from a secret: set EFFECT_SECRET_CRM/,
    );
  });

  it('names the variable whose value has no JSON field the header needs', () => {
    const fieldHeader = { headers: { authorization: { secretArn: SECRET_ARN, jsonField: 'token' } } };
    expect(() =>
      localEffects({ crm: { ...CRM, ...fieldHeader } }, { EFFECT_SECRET_CRM: 'plain-token' }),
    ).toThrow(/^EFFECT_SECRET_CRM: the secret is not JSON, so it has no field "token"$/);
  });
});
