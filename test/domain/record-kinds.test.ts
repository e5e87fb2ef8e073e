import { expect } from 'chai';
import { CUSTOM_FIELD_MODULES, customFieldModuleOfStream, type CustomFieldModule } from '../../src/domain/custom-fields.js';
import {
  IMPLEMENTED_KINDS, isRegistryType, kindHas, kindOfSingular, REGISTRY_TYPES, SINGULAR_OF, type RegistryType,
} from '../../src/domain/record-kinds.js';
import { TASK_ENTITY_TYPES, type TaskEntityType } from '../../src/events/tasks.js';
import { RECORD_KINDS } from '../../src/projections/record-timeline.js';
import { VIEW_MODULES, type ViewModule } from '../../src/queries/record-views.js';

/**
 * The lists of record kinds other code uses are derived from their one declaration
 * (src/domain/record-kinds.ts). Their members and order are what the API shows (error
 * messages list them, associations group in registry order), as they were when each was
 * written by hand.
 */
describe('record kinds declared once', () => {
  it('the registry record types, in the spec\'s registry order', () => {
    expect(REGISTRY_TYPES).to.deep.equal(['leads', 'opportunities', 'accounts', 'contacts', 'projects', 'tasks', 'work_requests', 'products']);
    expect(IMPLEMENTED_KINDS).to.deep.equal(['leads', 'opportunities', 'accounts', 'contacts', 'tasks', 'work_requests', 'products']);
    expect(SINGULAR_OF).to.deep.equal({
      contacts: 'contact', accounts: 'account', leads: 'lead', opportunities: 'opportunity', tasks: 'task', products: 'product', work_requests: 'work_request', projects: 'project',
    });
  });

  it('the kinds with custom fields, a timeline, task links and folded views', () => {
    expect(CUSTOM_FIELD_MODULES).to.deep.equal(['contacts', 'accounts', 'leads', 'opportunities', 'tasks', 'products', 'work_requests']);
    expect(RECORD_KINDS).to.deep.equal(['contact', 'account', 'lead', 'opportunity', 'task', 'work_request']);
    expect(TASK_ENTITY_TYPES).to.deep.equal(['contact', 'account', 'lead', 'opportunity']);
    expect([...VIEW_MODULES].sort()).to.deep.equal(['accounts', 'contacts', 'leads', 'opportunities', 'tasks']);
  });

  it('names: plural and singular, streams, and nothing from the prototype', () => {
    expect(kindOfSingular('work_request')).to.equal('work_requests');
    expect(kindOfSingular('opportunity')).to.equal('opportunities');
    expect(kindOfSingular('leads')).to.equal(undefined);
    expect(customFieldModuleOfStream('opportunity')).to.equal('opportunities');
    expect(customFieldModuleOfStream('product')).to.equal('products');
    expect(customFieldModuleOfStream('project')).to.equal(null);
    expect(customFieldModuleOfStream('user')).to.equal(null);
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(isRegistryType(name), name).to.equal(false);
      expect(kindHas(name, 'timeline'), name).to.equal(false);
      expect(kindOfSingular(name), name).to.equal(undefined);
    }
    expect(kindHas('leads', 'taskLink')).to.equal(true);
    expect(kindHas('tasks', 'taskLink')).to.equal(false);
  });

  it('the derived types stay precise literal unions', () => {
    const link: TaskEntityType = 'opportunity';
    // @ts-expect-error a task links to no task
    const noTaskLink: TaskEntityType = 'task';
    const module: CustomFieldModule = 'work_requests';
    // @ts-expect-error projects take no custom fields
    const noFields: CustomFieldModule = 'projects';
    const registry: RegistryType = 'projects';
    // @ts-expect-error the registry names kinds in the plural
    const singular: RegistryType = 'lead';
    const view: ViewModule = 'tasks';
    // @ts-expect-error products have no folded view
    const noView: ViewModule = 'products';
    expect([link, noTaskLink, module, noFields, registry, singular, view, noView]).to.have.length(8);
  });
});
