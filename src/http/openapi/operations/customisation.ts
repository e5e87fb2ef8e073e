import {
  asOfOnlyQuery,
  companyProfileBody,
  createFieldBody,
  createGroupBody,
  createIndustryBody,
  createTabBody,
  customFieldsQuery,
  fieldValidationBody,
  formFieldOrderBody,
  groupsQuery,
  layoutBody,
  layoutListQuery,
  layoutQuery,
  reorderFieldsBody,
  reorderGroupsBody,
  reorderTabsBody,
  tablePreferencesBody,
  tabsQuery,
  updateFieldBody,
  updateGroupBody,
  updateIndustryBody,
  updateTabBody,
} from '../../customisation/schemas.js';
import type { ModuleSchemas } from '../document.js';

export const customisationSchemas: ModuleSchemas = {
  '/admin/custom-fields': {
    'GET /': { query: customFieldsQuery, summary: "A module's custom field definitions (every module's without `module`); `asOf` with `module`: as they stood then" },
    'POST /': { body: createFieldBody, summary: 'Define a custom field of a record kind (administrators)' },
    'PUT /reorder/:module': { body: reorderFieldsBody, summary: "Put a module's custom fields in this order (the others follow in theirs)" },
    'GET /:id': { query: asOfOnlyQuery, summary: 'One definition (`asOf`: as it stood then)' },
    'PUT /:id': { body: updateFieldBody, summary: "Change a definition (its key, type and lookup module are fixed); existing records' values are not rewritten" },
  },
  '/admin/tabs': {
    'GET /': { query: tabsQuery },
    'POST /': { body: createTabBody },
    'PUT /reorder/:module': { body: reorderTabsBody },
    'PUT /:id': { body: updateTabBody },
  },
  '/admin/groups': {
    'GET /': { query: groupsQuery },
    'POST /': { body: createGroupBody },
    'PUT /reorder/:module': { body: reorderGroupsBody },
    'PUT /:id': { body: updateGroupBody },
  },
  '/admin/module-layout-settings': {
    'GET /check': { query: layoutQuery, summary: 'Whether a page of a module draws a custom layout, and the layout' },
    'GET /available-layouts': { query: layoutQuery },
    'GET /': { query: layoutListQuery },
    'PUT /': { body: layoutBody },
  },
  '/admin/industries': {
    'POST /': { body: createIndustryBody },
    'PUT /:id': { body: updateIndustryBody },
  },
  '/module-settings': {
    'PUT /:module/form-field-order': { body: formFieldOrderBody },
    'PUT /:module/field-validation': { body: fieldValidationBody, summary: "Replace a module's field validation rules (fields named must be the record's own or its custom fields)" },
  },
  '/table-preferences': { 'PUT /:module': { body: tablePreferencesBody, summary: "Save the caller's own preferences for a list (fields left out keep their value)" } },
  '/general-settings': { 'PUT /company': { body: companyProfileBody, summary: 'Change the company profile (administrators); send back what GET answered, changed' } },
};
