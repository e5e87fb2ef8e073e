import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { Router } from 'express';
import { recordSubmission } from '../../commands/forms/form-commands.js';
import { claimSubmitter } from '../../commands/forms/submitter-claims.js';
import { DomainError, invalid } from '../../domain/errors.js';
import { HONEYPOT_KEY, submissionValues } from '../../domain/forms.js';
import type { ActionResult, FormSubmission } from '../../events/forms.js';
import type { Position, StreamFact } from '../../events/store/types.js';
import { withWriteAlong, type WriteAlong } from '../../events/store/write-along.js';
import { countFormView, PUBLIC_FORM_AFTER_HIT_SQL, publicForm, publicFormOf, publicView, type Form } from '../../queries/forms.js';
import type { Services } from '../../service.js';
import { captchaTokenOf, verifyCaptcha } from './captcha.js';
import { recipientMails, runSubmitActions } from './submit-actions.js';

/** One answer for every address that is not an active form of that tenant: nothing tells forms or tenants apart. */
const notFoundOrInactive = () => new DomainError('not_found', 'Form not found or inactive');
const SEGMENT = /^[A-Za-z0-9-]{1,100}$/;
const USER_AGENT_MAX = 500;

/** The stored submission: its record is the first one its actions created (registry kind names). */
function submissionOf(form: Form, id: string, data: Record<string, unknown>, results: ActionResult[], ipAddress: string, userAgent: string | null): FormSubmission {
  const first = results.find((r) => r.status === 'success' && r.type.startsWith('create_'));
  const entityType = first ? ({ create_lead: 'leads', create_contact: 'contacts', create_account: 'accounts' } as Record<string, string>)[first.type] : null;
  const entityId = first ? (first.result![`${first.type.slice('create_'.length)}Id`] as string) : null;
  return { id, formId: form.id, formName: form.name, formCreatedBy: form.createdBy, data, entityType, entityId, actionResults: results, ipAddress, userAgent };
}

/**
 * The public form routes (no authentication): render a form by tenant slug and token, and
 * submit it. Submissions are rate-limited per IP, may need a captcha, and are checked by
 * field type before any action runs.
 */
export function publicFormsRouter(services: Services): Router {
  const router = Router();
  const { knex, config } = services;

  const resolve = async (req: Request) => {
    const { tenantSlug, token } = req.params as Record<string, string>;
    if (!SEGMENT.test(tenantSlug) || !SEGMENT.test(token)) throw notFoundOrInactive();
    const form = await publicForm(knex, tenantSlug, token);
    if (!form) throw notFoundOrInactive();
    return form;
  };

  router.get('/:tenantSlug/:token', async (req, res) => {
    const form = await resolve(req);
    await countFormView(knex, form.tenantId, form.id, services.clock.now());
    res.json({ ...publicView(form), honeypotField: HONEYPOT_KEY });
  });

  router.post('/:tenantSlug/:token/submit', async (req, res) => {
    const ip = req.ip ?? 'unknown';
    const limit = [{ key: `form-submit:ip:${ip}`, limit: config.FORM_SUBMIT_LIMIT_PER_IP, windowSeconds: config.FORM_SUBMIT_WINDOW_SECONDS }];
    const { tenantSlug, token } = req.params as Record<string, string>;
    if (!SEGMENT.test(tenantSlug) || !SEGMENT.test(token)) {
      await services.rateLimiter.hit(limit);
      throw notFoundOrInactive();
    }
    // The hit and the form in one round trip: refused over the limit whatever the form, as when they were two.
    const [row] = await services.rateLimiter.hitWithRead(limit, PUBLIC_FORM_AFTER_HIT_SQL, [tenantSlug, token]);
    if (!row) throw notFoundOrInactive();
    const form = publicFormOf(row);
    const body = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('The submission must be a JSON object of field values');
    const answer = (submissionId: string, created: object, actionResults: unknown[]) =>
      res.status(201).json({ success: true, submissionId, message: form.settings.successMessage, redirectUrl: form.settings.redirectUrl, createdEntities: created, actionResults });
    // A filled honeypot is a bot: it is told it succeeded, and nothing is stored or done.
    const honeypot = body[HONEYPOT_KEY];
    if (honeypot !== undefined && honeypot !== null && honeypot !== '' && honeypot !== false) return answer(randomUUID(), {}, []);
    if (form.settings.requireCaptcha) await verifyCaptcha(config, captchaTokenOf(body), ip);
    const data = submissionValues(form.fields, body);

    const submissionId = randomUUID();
    // Before any action runs: a second submit from this address (allowMultiple: false) is 409 and creates nothing.
    const claim = await claimSubmitter(knex, form, ip, submissionId);
    const ctx = { tenantId: form.tenantId, userId: form.createdBy, correlationId: submissionId };
    const s = { submissionId, form, data, submittedAt: services.clock.now().toISOString(), ctx };
    // The address's claim and the recipients' mails are stored by the submission's own append where the store can.
    const mails = recipientMails(services, s);
    const statements = [claim.statement, ...mails.map((m) => m.sql)].filter((sql): sql is string => sql !== null);
    const along: WriteAlong | undefined = statements.length ? { sql: statements.join(';\n') } : undefined;
    const userAgent = (req.get('user-agent') ?? '').slice(0, USER_AGENT_MAX) || null;
    // A visitor submitted it, not the form's creator (whose name the actions act under): recorded without a user, so
    // the creator is told of it (nobody is told of what they did themselves).
    const appendSubmission = (results: ActionResult[], facts?: StreamFact[]) =>
      withWriteAlong(along, () => recordSubmission(services, { ...ctx, userId: null }, submissionOf(form, submissionId, data, results, ip, userAgent), facts));
    // Appended beside the record the last action creates where it can (one transaction: stored with it or not at all; refused,
    // it is appended after the actions with their real results). An answer lost after its commit is recovered by the store.
    const beside: { stored?: Promise<{ position: Position | null } | null> } = {};
    const { results, created } = await runSubmitActions(services, s, (expected, record) => {
      beside.stored = appendSubmission(expected, [record]).catch(() => null);
    });
    const storedBeside = await beside.stored;
    const { position } =
      storedBeside ??
      (await appendSubmission(results).catch(async (error: unknown) => {
        // Not stored, and nothing done: the address may try again. Once an action has acted, a retry would do it twice.
        const settle = results.some((r) => r.status === 'success') ? claim.keep(false) : claim.release();
        await settle.catch((err: unknown) => services.logger.error({ err, formId: form.id }, 'form submitter claim could not be settled'));
        throw error;
      }));
    const carried = along?.written === true;
    await claim.keep(carried).catch((err: unknown) => services.logger.error({ err, formId: form.id }, 'form submitter claim could not be stored'));
    for (const mail of mails) {
      // A notification that cannot even be stored is logged; the visitor's submission counts.
      await mail.send(carried).catch((err: unknown) => services.logger.error({ err, formId: form.id }, 'form notification mail could not be stored'));
    }
    await services.waitForProjections(position);
    answer(submissionId, created, results);
  });
  return router;
}
