import type { Knex } from 'knex';

/** Live tasks below a task (any depth), deepest first, from the tasks read model. */
export async function liveSubtasksDeepestFirst(knex: Knex, tenantId: string, id: string): Promise<string[]> {
  const { rows } = await knex.raw(
    `with recursive below as (
       select id, 1 as depth from tasks where tenant_id = ? and parent_task_id = ? and deleted_at is null
       union all select t.id, below.depth + 1 from tasks t join below on t.parent_task_id = below.id
        where t.tenant_id = ? and t.deleted_at is null and below.depth < 100)
     select id from below order by depth desc`,
    [tenantId, id, tenantId],
  );
  return rows.map((r: { id: string }) => r.id);
}
