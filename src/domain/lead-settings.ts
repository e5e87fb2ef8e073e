import type { WorkingHours } from './sla-time.js';

/** A tenant's keyed lead settings (`LeadSettingChanged` values): their shapes and what a new tenant starts with. */

/** The lead response-time policy (one per tenant), in working hours. */
export interface SlaPolicy extends WorkingHours {
  enabled: boolean;
  firstContactHours: number;
  escalationEnabled: boolean;
  escalationHours: number;
  breachNotifyOwner: boolean;
  breachNotifyManager: boolean;
  escalationNotifyManager: boolean;
  escalationNotifyAdmin: boolean;
}

export interface GeneralLeadSettings {
  autoScoring: boolean;
  autoPriorityFromScore: boolean;
  activeQualificationFramework: string;
}

export interface QualificationThreshold {
  threshold: number;
  autoQualify: boolean;
}

/** Keyed settings and what a new tenant starts with. */
export const DEFAULT_SETTINGS = {
  general: { autoScoring: true, autoPriorityFromScore: true, activeQualificationFramework: 'bant' } as GeneralLeadSettings,
  stages: { lockPreviousStages: false, showUpcomingStages: true, requireUnlockReason: false },
  duplicateDetection: { enabled: true, checkLeads: true, checkContacts: true, exactEmailMatch: 'warn', exactPhoneMatch: 'warn' },
  conversion: { makeReadOnly: true, allowNotes: true, allowActivities: true, allowFieldEdit: false, copyActivities: true, copyNotes: true, copyDocuments: true },
  ownership: { addPreviousOwnerToTeam: true, previousOwnerRole: 'Lead Generator', notifyNewOwner: true },
  sla: {
    enabled: true,
    firstContactHours: 4,
    workingHoursStart: '09:00',
    workingHoursEnd: '18:00',
    workingDays: [1, 2, 3, 4, 5],
    timezone: 'UTC',
    escalationEnabled: true,
    escalationHours: 8,
    breachNotifyOwner: true,
    breachNotifyManager: true,
    escalationNotifyManager: true,
    escalationNotifyAdmin: false,
  } as SlaPolicy,
  qualificationThreshold: { threshold: 50, autoQualify: false } as QualificationThreshold,
};
export type SettingKey = keyof typeof DEFAULT_SETTINGS;
export const SETTING_KEYS = Object.keys(DEFAULT_SETTINGS) as SettingKey[];
