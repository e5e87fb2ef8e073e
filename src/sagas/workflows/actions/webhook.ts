import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  headerValueEscape,
  interpolate,
  jsonStringEscape,
  plainText,
  urlComponentEscape,
} from '../../../domain/workflow-templates.js';
import { OutboundFailed, OutboundRefused, outboundRequest } from '../../../infra/outbound-http.js';
import { ActionFailed, type ActionHandler, type ActionInput } from '../action.js';
import { configOf, textOf } from './config.js';

/**
 * The `webhook` action: one HTTP call to a configured URL through outbound HTTP (so the SSRF
 * policy applies), with `{{trigger.field}}` values escaped for where they land. Any HTTP
 * status is a completed step (the receiver answered); a refused address, a network error or
 * a timeout fails it. The step id goes out as `Idempotency-Key`: a step carried out again
 * after a crash sends the same key, so the receiver can drop the repeat.
 */

export const WEBHOOK_MAX_TIMEOUT_SECONDS = 120;
const RESPONSE_BODY_CHARS = 500;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const keyValue = z.object({ key: z.string().default(''), value: z.unknown().optional(), enabled: z.boolean().optional() });
const keyValues = z.array(keyValue).nullish().transform((list) => (list ?? []).filter((p) => p.enabled !== false && p.key.trim() !== ''));

export const webhookConfigSchema = z.object({
  url: z.string({ error: 'url is required' }).trim().min(1, 'url is required'),
  method: z
    .string()
    .nullish()
    .transform((m) => (m ?? 'POST').toUpperCase())
    .pipe(z.enum(METHODS, { error: `method must be one of ${METHODS.join(', ')}` })),
  params: keyValues,
  headers: keyValues,
  bodyType: z.enum(['json', 'form-data', 'raw', 'none'], { error: 'bodyType must be json, form-data, raw or none' }).nullish().transform((t) => t ?? 'json'),
  bodyJson: z.string().nullish(),
  formData: keyValues,
  bodyRaw: z.string().nullish(),
  verifySsl: z.boolean().nullish().transform((v) => v ?? true),
  // Configs are checked when a workflow is saved; a stored value out of range is brought into it.
  timeoutSeconds: z.coerce
    .number()
    .nullish()
    .transform((s) => Math.min(WEBHOOK_MAX_TIMEOUT_SECONDS, Math.max(1, Number.isFinite(s) ? Number(s) : 30))),
});

export type WebhookConfig = z.infer<typeof webhookConfigSchema>;

interface Body {
  contentType: string | null;
  payload: string | Buffer | undefined;
}

/** The body for the config's bodyType; a JSON body that no longer parses after interpolation fails the step. */
function bodyOf(config: WebhookConfig, input: ActionInput): Body {
  const record = input.trigger.record;
  switch (config.bodyType) {
    case 'none':
      return { contentType: null, payload: undefined };
    case 'raw':
      return { contentType: 'text/plain; charset=utf-8', payload: interpolate(config.bodyRaw ?? '', record, plainText) };
    case 'form-data':
      return multipart(config.formData.map((f) => [f.key, interpolate(textOf(f.value), record, plainText)]));
    case 'json': {
      if (config.bodyJson === undefined || config.bodyJson === null || config.bodyJson.trim() === '') {
        return { contentType: 'application/json', payload: JSON.stringify(input.trigger) };
      }
      const text = interpolate(config.bodyJson, record, jsonStringEscape);
      try {
        JSON.parse(text);
      } catch {
        throw new ActionFailed('the webhook body is not valid JSON once its {{trigger…}} values are filled in');
      }
      return { contentType: 'application/json', payload: text };
    }
  }
}

/** multipart/form-data with a random boundary; a field name cannot break out of its quotes. */
function multipart(fields: [string, string][]): Body {
  const boundary = `----crm-webhook-${randomBytes(12).toString('hex')}`;
  const name = (key: string) => key.replace(/[\r\n]/g, ' ').replace(/"/g, '%22');
  const parts = fields.map(([key, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name(key)}"\r\n\r\n${value}\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, payload: Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'utf8') };
}

function urlOf(config: WebhookConfig, input: ActionInput): string {
  const record = input.trigger.record;
  let url: URL;
  try {
    url = new URL(interpolate(config.url, record, urlComponentEscape));
  } catch {
    throw new ActionFailed('the webhook url is not a valid URL once its {{trigger…}} values are filled in');
  }
  // URLSearchParams encodes each key and value: a value cannot add parameters.
  for (const param of config.params) url.searchParams.append(interpolate(param.key, record, plainText), interpolate(textOf(param.value), record, plainText));
  return url.href;
}

function headersOf(config: WebhookConfig, input: ActionInput, contentType: string | null): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const header of config.headers) {
    const name = header.key.trim();
    if (!HEADER_NAME.test(name)) throw new ActionFailed(`"${name}" is not a valid header name`);
    // The template's own text is cleaned as well as the values: no header can carry a line break.
    headers[name.toLowerCase()] = headerValueEscape(interpolate(textOf(header.value), input.trigger.record, headerValueEscape));
  }
  if (contentType && !headers['content-type']) headers['content-type'] = contentType;
  headers['idempotency-key'] = input.stepId;
  return headers;
}

export const webhookAction: ActionHandler = {
  actionType: 'webhook',
  async run(input) {
    const config = configOf(webhookConfigSchema, input.config, 'webhook');
    const url = urlOf(config, input);
    // GET never carries a body (many servers refuse one).
    const body = config.method === 'GET' ? { contentType: null, payload: undefined } : bodyOf(config, input);
    try {
      const response = await outboundRequest(
        {
          url,
          method: config.method,
          headers: headersOf(config, input, body.contentType),
          body: body.payload,
          timeoutMs: config.timeoutSeconds * 1000,
          verifyTls: config.verifySsl,
        },
        { allowedHosts: input.deps.config.OUTBOUND_ALLOWED_HOSTS },
      );
      return {
        statusCode: response.status,
        ok: response.status >= 200 && response.status <= 299,
        responseBody: response.body.slice(0, RESPONSE_BODY_CHARS),
      };
    } catch (error) {
      // Both name the host only, never the path or query (they may carry keys).
      if (error instanceof OutboundRefused || error instanceof OutboundFailed) throw new ActionFailed(error.message);
      throw error;
    }
  },
};
