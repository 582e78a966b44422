import { describe, expect, it } from 'vitest';
import { checkPublicBaseUrl, publicWebhookUrl } from '../../lambdas/shared/public-url.js';
import { ConfigError } from '../../lambdas/shared/settings.js';

describe('the public webhook URL', () => {
  it('is the base, the route path and the query exactly as received', () => {
    expect(publicWebhookUrl('https://abc.execute-api.eu-west-1.amazonaws.com', 'square')).toBe(
      'https://abc.execute-api.eu-west-1.amazonaws.com/webhooks/square',
    );
    expect(publicWebhookUrl('https://hooks.example.com/api/', 'twilio', 'b=2&a=1%20x')).toBe(
      'https://hooks.example.com/api/webhooks/twilio?b=2&a=1%20x',
    );
    expect(publicWebhookUrl('http://127.0.0.1:3000//', 'square', '')).toBe(
      'http://127.0.0.1:3000/webhooks/square',
    );
  });

  it('accepts an http(s) base with a path', () => {
    for (const base of [
      'https://hooks.example.com',
      'https://hooks.example.com/api',
      'http://127.0.0.1:3000/',
    ])
      expect(() => checkPublicBaseUrl(base)).not.toThrow();
  });

  it('refuses a base that is not one, naming the variable', () => {
    for (const [base, message] of [
      ['hooks.example.com', /absolute URL/],
      ['ftp://hooks.example.com', /http or https/],
      ['https://hooks.example.com/?x=1', /no query or fragment/],
      ['https://hooks.example.com/#top', /no query or fragment/],
      ['https://user:pw@hooks.example.com', /credentials/],
    ] as const) {
      expect(() => checkPublicBaseUrl(base)).toThrow(ConfigError);
      expect(() => checkPublicBaseUrl(base)).toThrow(message);
      expect(() => checkPublicBaseUrl(base)).toThrow(/PUBLIC_BASE_URL/);
    }
  });
});
