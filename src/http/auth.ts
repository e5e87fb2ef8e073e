import type { Principal } from '../domain/principal.js';
import { Router } from 'express';
import { z } from 'zod';
import { changePassword, forgotPassword, login, refresh, resetPassword, validateResetToken } from '../commands/identity/auth.js';
import { register } from '../commands/identity/registration.js';
import { acceptInvitation, validateInvitation } from '../commands/identity/invitations.js';
import { passwordSchema } from '../infra/passwords.js';
import { appConfigOf, authUser, authUserShort, currentUser, tenantShape } from '../queries/auth.js';
import type { Services } from '../service.js';
import { principalOf, requireSignedInUser } from './authenticate.js';
import { parseBody, parseQuery } from './validate.js';

const name = z.string().trim().min(1).max(100);
const email = z.email().max(254);

export const registerBody = z.object({
  email,
  password: passwordSchema,
  companyName: z.string().trim().min(2).max(255),
  firstName: name,
  lastName: name,
  companySlug: z
    .string()
    .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'lower-case letters, digits and single dashes')
    .min(2)
    .max(60)
    .optional(),
});
export const loginBody = z.object({ tenantSlug: z.string().min(1).max(100), email: z.string().min(1).max(254), password: z.string().min(1).max(1024) });
export const refreshBody = z.object({ refreshToken: z.string().min(1).max(512) });
export const tokenQuery = z.object({ token: z.string().min(1).max(512) });
export const acceptBody = z.object({ token: z.string().min(1).max(512), password: passwordSchema, firstName: name, lastName: name });
export const forgotBody = z.object({ email: z.string().min(1).max(254), tenantSlug: z.string().min(1).max(100) });
// `password` is what the reference web client sends; the spec says `newPassword`.
export const resetBody = z
  .object({ token: z.string().min(1).max(512), newPassword: passwordSchema.optional(), password: passwordSchema.optional() })
  .refine((b) => b.newPassword ?? b.password, { message: 'newPassword is required', path: ['newPassword'] })
  .transform((b) => ({ token: b.token, newPassword: (b.newPassword ?? b.password)! }));
export const changeBody = z.object({ currentPassword: z.string().min(1).max(1024), newPassword: passwordSchema });

const RESET_MESSAGE = 'If an account exists with that email, a reset link has been sent.';

export function authRouter(services: Services): Router {
  const router = Router();
  const requestId = (res: { locals: Record<string, unknown> }) => String(res.locals.requestId);
  /** A signed-in session's answer: tokens, the user (short: the six fields registration and invitation answer with), tenant, app config. */
  const session = (result: Awaited<ReturnType<typeof login>>, user: (p: Principal) => object) => ({
    accessToken: result.accessToken,
    refreshToken: result.refreshToken,
    user: user(result.principal),
    tenant: tenantShape(result.principal),
    appConfig: appConfigOf(services.config),
  });

  router.post('/register', async (req, res) => {
    res.status(201).json(session(await register(services, parseBody(registerBody, req), requestId(res)), authUserShort));
  });

  router.post('/login', async (req, res) => {
    res.json(session(await login(services, parseBody(loginBody, req), req.ip ?? 'unknown', requestId(res)), authUser));
  });

  router.post('/refresh', async (req, res) => {
    res.json(await refresh(services, parseBody(refreshBody, req).refreshToken));
  });

  router.get('/invite/validate', async (req, res) => {
    res.json(await validateInvitation(services, parseQuery(tokenQuery, req).token));
  });

  router.post('/invite/accept', async (req, res) => {
    res.status(201).json(session(await acceptInvitation(services, parseBody(acceptBody, req), requestId(res)), authUserShort));
  });

  router.post('/forgot-password', async (req, res) => {
    await forgotPassword(services, parseBody(forgotBody, req), req.ip ?? 'unknown');
    res.json({ message: RESET_MESSAGE });
  });

  router.get('/reset-password/validate', async (req, res) => {
    res.json(await validateResetToken(services, parseQuery(tokenQuery, req).token));
  });

  router.post('/reset-password', async (req, res) => {
    await resetPassword(services, parseBody(resetBody, req), requestId(res));
    res.json({ message: 'Password has been reset. You can now sign in.' });
  });

  const authenticated = services.authenticate;
  router.get('/me', authenticated, (_req, res) => {
    res.json(currentUser(principalOf(res)));
  });

  router.post('/change-password', authenticated, requireSignedInUser, async (req, res) => {
    await changePassword(services, principalOf(res), parseBody(changeBody, req), requestId(res));
    res.json({ message: 'Password changed successfully' });
  });

  return router;
}
