import type { Mailer } from '../../infra/mailer.js';

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
