import { DomainError, invalid, unavailable } from '../../domain/errors.js';
import { CAPTCHA_KEYS } from '../../domain/forms.js';
import { outboundPolicy, outboundRequest } from '../../infra/outbound-http.js';
import type { Config } from '../../infra/config.js';

const VERIFY_TIMEOUT_MS = 10_000;

/** The token a visitor's page sent: `__captchaToken` (spec) or `__recaptchaToken` (reference). */
export function captchaTokenOf(body: Record<string, unknown>): string | null {
  for (const key of CAPTCHA_KEYS) {
    const value = body[key];
    if (typeof value === 'string' && value.trim() !== '' && value.length <= 4096) return value.trim();
  }
  return null;
}

/**
 * Checks a token with the configured reCAPTCHA-compatible verifier (POST `secret`, `response`,
 * `remoteip` → `{ success, score }`): missing or refused is 400, an unreachable verifier 503.
 * No verifier configured: nothing can vouch for the visitor, so the submission is refused (400).
 */
export async function verifyCaptcha(config: Config, token: string | null, remoteIp: string): Promise<void> {
  if (!token) throw invalid('CAPTCHA verification required', [{ path: '__captchaToken', message: 'required', code: 'captcha_required' }]);
  if (!config.CAPTCHA_VERIFY_URL) throw invalid('CAPTCHA verification failed', [{ path: '__captchaToken', message: 'no verifier configured', code: 'captcha_failed' }]);
  const verifier = new URL(config.CAPTCHA_VERIFY_URL);
  let answer: { success?: unknown; score?: unknown };
  try {
    const response = await outboundRequest(
      {
        url: config.CAPTCHA_VERIFY_URL,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ secret: config.CAPTCHA_SECRET ?? '', response: token, remoteip: remoteIp }).toString(),
        timeoutMs: VERIFY_TIMEOUT_MS,
      },
      // The operator configured this address: it is trusted even on a private network.
      outboundPolicy(config.OUTBOUND_ALLOWED_HOSTS, verifier),
    );
    answer = response.status === 200 ? JSON.parse(response.body) : {};
  } catch (error) {
    if (error instanceof SyntaxError) answer = {};
    else if (error instanceof DomainError) throw error;
    else throw unavailable('CAPTCHA verification is unavailable; try again shortly');
  }
  const score = typeof answer.score === 'number' ? answer.score : null;
  if (answer.success !== true || (score !== null && score < config.CAPTCHA_MIN_SCORE)) {
    throw invalid('CAPTCHA verification failed', [{ path: '__captchaToken', message: 'refused by the verifier', code: 'captcha_failed' }]);
  }
}
