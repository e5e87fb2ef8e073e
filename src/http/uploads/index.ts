import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { deleteDocument, setAvatar, setCompanyLogo, uploadDocument } from '../../commands/uploads.js';
import { forbidden, invalid, notFound } from '../../domain/errors.js';
import { can, type Principal } from '../../domain/principal.js';
import { parseVisibility } from '../../domain/uploads.js';
import { fileStorage } from '../../infra/storage/index.js';
import { recordKind, recordVisible, type RecordKind } from '../../queries/record-registry.js';
import { findAvatar, findCompanyLogo, findDocument } from '../../queries/uploads.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin } from '../authenticate.js';
import { idParam } from '../validate.js';
import { receiveFile, type ReceivedFile } from './receive-file.js';
import { serveStoredFile } from './serve-file.js';

/** Kinds that have a picture; contacts and accounts are registry records, users are people of the tenant. */
const AVATAR_TYPES = new Set(['contacts', 'accounts', 'users']);

/** Public address of a tenant's logo (no token: e-mails and sign-in pages show it). */
export const logoUrl = (basePath: string, tenantId: string, id: string) => `${basePath}/public/logos/${tenantId}/${id}`;

/**
 * `/upload`: documents on any record kind of the registry (attach, download, soft
 * delete), pictures of contacts, accounts and users, and the company logo. The record is
 * checked (kind, permission, tenant, scope) before a byte of the body is read.
 */
export function uploadsRouter(services: Services): Router {
  const router = Router();
  const { knex, config } = services;
  const storage = fileStorage(config);
  const basePath = config.API_BASE_PATH;

  /** The record a path names, with the caller's right to `action` it: 400 unknown kind, 403 no permission, 404 not theirs to see. */
  async function recordOf(req: Request, res: Response, action: 'view' | 'edit'): Promise<{ kind: RecordKind; id: string; principal: Principal }> {
    const kind = recordKind(String(req.params.entityType));
    if (!kind) throw invalid('Unsupported record type');
    const principal = principalOf(res);
    if (!can(principal, kind.module, action)) throw forbidden(`You don't have permission to ${action} ${kind.module}`);
    const id = idParam(req, 'entityId', kind.noun);
    if (!(await recordVisible(knex, principal, kind, id))) throw notFound(kind.noun);
    return { kind, id, principal };
  }

  /** Records an upload whose bytes are stored; if that fails, the bytes go too (no orphan). */
  async function recorded<T>(file: ReceivedFile, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      await storage.remove(file.storageKey).catch(() => undefined);
      throw error;
    }
  }

  router.post('/document/:entityType/:entityId', async (req, res) => {
    const { kind, id: recordId, principal } = await recordOf(req, res, 'edit');
    const file = await receiveFile(req, { storage, tenantId: principal.tenantId, maxBytes: config.UPLOAD_MAX_BYTES });
    const id = randomUUID();
    const result = await recorded(file, async () => {
      const visibility = parseVisibility(file.fields.visibility);
      return uploadDocument(services, commandContextOf(res), {
        id, recordType: kind.recordType, recordId, name: file.name, mimeType: file.mimeType, size: file.size,
        storageKey: file.storageKey, uploadedBy: principal.userId, visibility, disposition: file.disposition,
      });
    });
    const location = `${req.baseUrl}/document/${kind.type}/${recordId}/${id}`;
    await services.waitForProjections(result.position, { id, location });
    res.status(201).location(location).json(await findDocument(knex, principal, kind, recordId, id, basePath).then((d) => d && publicDocument(d)));
  });

  router.get('/document/:entityType/:entityId/:documentId', async (req, res) => {
    const { kind, id: recordId, principal } = await recordOf(req, res, 'view');
    const document = await findDocument(knex, principal, kind, recordId, idParam(req, 'documentId', 'Document'), basePath);
    if (!document) throw notFound('Document');
    await serveStoredFile(res, storage, document, 'private, no-store');
  });

  router.delete('/document/:entityType/:entityId/:documentId', async (req, res) => {
    const { kind, id: recordId, principal } = await recordOf(req, res, 'view');
    const id = idParam(req, 'documentId', 'Document');
    // Hidden by its visibility tag reads as absent, like another record's document.
    if (!(await findDocument(knex, principal, kind, recordId, id, basePath))) throw notFound('Document');
    const result = await deleteDocument(services, commandContextOf(res), {
      id, recordType: kind.recordType, recordId, userId: principal.userId, isAdmin: principal.isAdmin, canEditRecord: can(principal, kind.module, 'edit'),
    });
    await services.waitForProjections(result.position);
    res.json({ success: true });
  });

  /** The contact, account or user a picture path names, checked for `action` (a user may always change their own). */
  async function avatarOwner(req: Request, res: Response, action: 'view' | 'edit'): Promise<{ entityType: string; id: string; principal: Principal }> {
    const entityType = String(req.params.entityType);
    if (!AVATAR_TYPES.has(entityType)) throw invalid('Pictures belong to contacts, accounts or users');
    if (entityType !== 'users') {
      const { id, principal } = await recordOf(req, res, action);
      return { entityType, id, principal };
    }
    const principal = principalOf(res);
    const id = idParam(req, 'entityId', 'User');
    if (action === 'edit' && id !== principal.userId && !can(principal, 'users', 'edit')) throw forbidden("You don't have permission to edit users");
    const user = await knex('users').where({ id, tenant_id: principal.tenantId }).whereNull('deleted_at').first('id');
    if (!user) throw notFound('User');
    return { entityType, id, principal };
  }
  const avatarUrl = (entityType: string, id: string) => `${basePath}/upload/avatar/${entityType}/${id}`;

  router.post('/avatar/:entityType/:entityId', async (req, res) => {
    const { entityType, id, principal } = await avatarOwner(req, res, 'edit');
    const file = await receiveFile(req, { storage, tenantId: principal.tenantId, maxBytes: config.IMAGE_MAX_BYTES, imagesOnly: true });
    const result = await recorded(file, () =>
      setAvatar(services, commandContextOf(res), { entityType, entityId: id, name: file.name, mimeType: file.mimeType, size: file.size, storageKey: file.storageKey }),
    );
    await services.waitForProjections(result.position);
    res.status(201).json({ id, url: avatarUrl(entityType, id), name: file.name, originalName: file.name, mimeType: file.mimeType, sizeBytes: file.size });
  });

  router.get('/avatar/:entityType/:entityId', async (req, res) => {
    const { entityType, id, principal } = await avatarOwner(req, res, 'view');
    const avatar = await findAvatar(knex, principal.tenantId, entityType, id);
    if (!avatar) throw notFound('Picture');
    await serveStoredFile(res, storage, { ...avatar, disposition: 'inline' }, 'private, max-age=60');
  });

  router.post('/logo', requireAdmin, async (req, res) => {
    const principal = principalOf(res);
    const file = await receiveFile(req, { storage, tenantId: principal.tenantId, maxBytes: config.IMAGE_MAX_BYTES, imagesOnly: true });
    const id = randomUUID();
    const result = await recorded(file, () =>
      setCompanyLogo(services, commandContextOf(res), { id, name: file.name, mimeType: file.mimeType, size: file.size, storageKey: file.storageKey }),
    );
    await services.waitForProjections(result.position);
    res.status(201).json({ id, url: logoUrl(basePath, principal.tenantId, id), name: file.name, mimeType: file.mimeType, sizeBytes: file.size });
  });

  router.get('/logo', async (_req, res) => {
    const principal = principalOf(res);
    const logo = await findCompanyLogo(knex, principal.tenantId);
    res.json(logo ? { id: logo.id, url: logoUrl(basePath, principal.tenantId, logo.id), mimeType: logo.mimeType, sizeBytes: logo.size } : { id: null, url: null });
  });

  return router;
}

/** The stored key stays inside the service. */
const publicDocument = ({ storageKey: _key, disposition: _disposition, ...document }: NonNullable<Awaited<ReturnType<typeof findDocument>>>) => document;

/** `/public/logos/:tenantId/:logoId`: a tenant's current logo, without a token (spec: "stored publicly"). */
export function publicLogosRouter(services: Services): Router {
  const router = Router();
  const storage = fileStorage(services.config);
  router.get('/:tenantId/:logoId', async (req, res) => {
    const logo = await findCompanyLogo(services.knex, idParam(req, 'tenantId', 'Logo'), idParam(req, 'logoId', 'Logo'));
    if (!logo) throw notFound('Logo');
    await serveStoredFile(res, storage, { ...logo, disposition: 'inline' }, 'public, max-age=86400, immutable');
  });
  return router;
}
