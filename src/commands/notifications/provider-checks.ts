import type { Mailer } from '../../infra/mailer.js';
import type { TextMessenger } from '../../infra/text-messages.js';

/** What an administrator's "verify" of a delivery channel answers: never an error status, the provider's own words on failure. */
export interface ProviderCheck {
  success: boolean;
  message: string;
}

/**
 * Sends a test email through the service's SMTP server, now, and says how it went. The
 * message is kept in the outbox like every mail (kind `smtp_verification`).
 */
export async function verifySmtp(mailer: Mailer, tenantId: string, testEmail: string): Promise<ProviderCheck> {
  if (!mailer.smtpConfigured) return { success: false, message: 'SMTP is not configured: set SMTP_URL' };
  const result = await mailer.send({
    tenantId,
    kind: 'smtp_verification',
    to: testEmail,
    subject: 'CRM: SMTP test',
    text: 'This test email confirms that the CRM can send mail through its SMTP server.',
  });
  return result.status === 'sent'
    ? { success: true, message: `Test email sent to ${testEmail}` }
    : { success: false, message: `SMTP delivery failed: ${result.error ?? 'unknown error'}` };
}

/**
 * Sends a test SMS through the configured provider (SMS_PROVIDER_URL), now, and says how it
 * went; kept in the text outbox like every message (kind `sms_verification`). The number is
 * an international one (checked by the request schema with the messenger's own rule).
 */
export async function verifySmsProvider(texts: TextMessenger, tenantId: string, testPhone: string): Promise<ProviderCheck> {
  if (!texts.smsConfigured) return { success: false, message: 'No SMS provider is configured: set SMS_PROVIDER_URL' };
  const result = await texts.send({ tenantId, kind: 'sms_verification', channel: 'sms', to: testPhone, body: 'CRM: this test message confirms that the SMS provider works.' });
  return result.status === 'sent'
    ? { success: true, message: `Test SMS sent to ${result.to}` }
    : { success: false, message: `SMS delivery failed: ${result.error ?? 'unknown error'}` };
}
