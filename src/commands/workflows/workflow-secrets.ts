import type { Knex } from 'knex';
import type { WorkflowAction } from '../../domain/workflows.js';
import { SEALED_COLUMNS, type SecretBox } from '../../infra/secret-box.js';

/**
 * Names that say a value is a credential: contained anywhere (`X-Auth-Token`, `client_secret`), or as the last word of
 * the name (`key`, `X-Functions-Key`, `sig`, `code` as in `?code=` of serverless functions). A false positive only hides
 * a value behind `[secret]`; a miss would put a credential in the workflow's events.
 */
export const SECRET_NAME = /auth|token|secret|passw|pwd|credential|private|session|cookie|signature|api[-_]?key|(^|[-_. ])(key|sig|code)$/i;
/** What a definition holds in a credential's place (a client sending it back keeps the stored value). */
export const SECRET_PLACEHOLDER = '[secret]';
const LISTS = ['headers', 'params', 'formData'] as const;

export interface ActionSecret {
  actionId: string;
  place: string;
  value: string;
}

type Config = Record<string, unknown>;
const isPair = (item: unknown): item is { key: string; value: unknown } => !!item && typeof item === 'object' && typeof (item as { key?: unknown }).key === 'string';

/** Each credential-looking place of a config: top-level keys and key/value pairs of headers, params and form data. */
function eachSecretPlace(config: Config, visit: (place: string, value: unknown, replace: (next: unknown) => void) => void) {
  for (const [key, value] of Object.entries(config)) {
    if ((LISTS as readonly string[]).includes(key) && Array.isArray(value)) {
      value.forEach((item, index) => {
        if (isPair(item) && SECRET_NAME.test(item.key)) visit(`${key}:${item.key.toLowerCase()}`, item.value, (next) => (value[index] = { ...item, value: next }));
      });
    } else if (SECRET_NAME.test(key) && (typeof value === 'string' || typeof value === 'number')) {
      visit(key, value, (next) => (config[key] = next));
    }
  }
}

/**
 * The actions with every credential replaced by the placeholder, and the credentials to
 * keep apart. A placeholder sent back by the client keeps what is stored for that place.
 */
export function separateSecrets(actions: WorkflowAction[]): { actions: WorkflowAction[]; secrets: ActionSecret[] } {
  const secrets: ActionSecret[] = [];
  const masked = actions.map((action) => {
    const config = structuredClone(action.config);
    eachSecretPlace(config, (place, value, replace) => {
      if (value === SECRET_PLACEHOLDER) return;
      if (value === null || value === undefined || value === '') return;
      secrets.push({ actionId: action.id, place, value: String(value) });
      replace(SECRET_PLACEHOLDER);
    });
    return { ...action, config };
  });
  return { actions: masked, secrets };
}

/** The config as a run sends it: each placeholder filled from the stored credentials of its action. */
export function withSecrets(action: WorkflowAction, secrets: ActionSecret[]): Config {
  const mine = secrets.filter((s) => s.actionId === action.id);
  if (mine.length === 0) return action.config;
  const config = structuredClone(action.config);
  eachSecretPlace(config, (place, value, replace) => {
    const stored = mine.find((s) => s.place === place);
    if (value === SECRET_PLACEHOLDER && stored) replace(stored.value);
  });
  return config;
}

/** Whether a config of these actions holds a stored credential's placeholder (else a run needs no stored credential). */
export function needsSecrets(actions: WorkflowAction[]): boolean {
  let found = false;
  for (const action of actions) {
    eachSecretPlace(action.config, (_place, value) => {
      if (value === SECRET_PLACEHOLDER) found = true;
    });
    if (found) return true;
  }
  return false;
}

/** New credentials replace what was stored at the same places; places no longer in the definition keep theirs (older versions' runs may use them). */
const SEALED = SEALED_COLUMNS.workflowSecret;
type SecretDeps = { knex: Knex; secretBox: SecretBox };

export async function storeSecrets(deps: SecretDeps, tenantId: string, workflowId: string, secrets: ActionSecret[]): Promise<void> {
  if (secrets.length === 0) return;
  const rows = secrets.map((s) => ({ tenant_id: tenantId, workflow_id: workflowId, action_id: s.actionId, place: s.place }));
  await deps.knex(SEALED.table)
    .insert(rows.map((row, i) => ({ ...row, value: deps.secretBox.seal(SEALED, row, secrets[i].value) })))
    .onConflict(['workflow_id', 'action_id', 'place'])
    .merge(['value']);
}

export async function loadSecrets(deps: SecretDeps, tenantId: string, workflowId: string): Promise<ActionSecret[]> {
  const rows = await deps.knex(SEALED.table).where({ tenant_id: tenantId, workflow_id: workflowId }).select('workflow_id', 'action_id', 'place', 'value');
  return rows.map((r) => ({ actionId: r.action_id, place: r.place, value: deps.secretBox.open(SEALED, r, r.value) }));
}
