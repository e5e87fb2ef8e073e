import type { DomainEvent } from './domain-event.js';
import type { RecordedEvent } from './store/types.js';
import type { AccountEvent } from './accounts.js';
import type { ApiKeyEvent } from './api-keys.js';
import type { AssociationEvent } from './associations.js';
import type { ContactEvent } from './contacts.js';
import type { DashboardShareEvent, TargetEvent } from './dashboard.js';
import type { UserDashboardEvent } from './dashboard-layout.js';
import type { FormEvent, FormSubmissionEvent } from './forms.js';
import type { GeneralSettingsEvent } from './general-settings.js';
import type { LeadSettingsEvent } from './lead-settings.js';
import type { LeadEvent } from './leads.js';
import type { ModuleSettingsEvent } from './module-settings.js';
import type { NotificationEvent, NotificationPreferencesEvent, NotificationSettingsEvent } from './notifications.js';
import type { OpportunityEvent } from './opportunities.js';
import type { DepartmentEvent, RoleEvent, TeamEvent } from './organisation.js';
import type { OpportunitySettingsEvent } from './opportunity-settings.js';
import type { PriceBookEvent, ProductBundleEvent, ProductCategoryEvent, ProductEvent } from './products.js';
import type { PushKeysEvent, PushSubscriptionEvent } from './push.js';
import type { ReportEvent, ReportFolderEvent, ReportScheduleEvent, SystemReportsEvent } from './reports.js';
import type { TablePreferencesEvent } from './table-preferences.js';
import type { TaskSettingsEvent } from './task-settings.js';
import type { TaskEvent } from './tasks.js';
import type { TenantEvent } from './tenants.js';
import type { TimeEntryEvent, TimerEvent } from './time-entries.js';
import type { AvatarEvent, CompanyLogoEvent, DocumentEvent } from './uploads.js';
import type { InvitationEvent, UserEvent } from './users.js';
import type { WebhookSubscriptionEvent } from './webhooks.js';
import type { WorkRequestSettingsEvent } from './work-request-settings.js';
import type { WorkRequestEvent } from './work-requests.js';
import type { WorkflowEvent, WorkflowRotationEvent, WorkflowRunEvent } from './workflows.js';

/**
 * Every event the service writes: the union projections and sagas are typed on. An event
 * type a module declares must join it here, or no handler can name it.
 */
export type AppEvent =
  | AccountEvent
  | ApiKeyEvent
  | AssociationEvent
  | ContactEvent
  | DashboardShareEvent
  | TargetEvent
  | UserDashboardEvent
  | FormEvent
  | FormSubmissionEvent
  | GeneralSettingsEvent
  | LeadSettingsEvent
  | LeadEvent
  | ModuleSettingsEvent
  | NotificationEvent
  | NotificationPreferencesEvent
  | NotificationSettingsEvent
  | OpportunityEvent
  | OpportunitySettingsEvent
  | RoleEvent
  | DepartmentEvent
  | TeamEvent
  | PriceBookEvent
  | ProductBundleEvent
  | ProductCategoryEvent
  | ProductEvent
  | PushKeysEvent
  | PushSubscriptionEvent
  | ReportEvent
  | ReportFolderEvent
  | ReportScheduleEvent
  | SystemReportsEvent
  | TablePreferencesEvent
  | TaskSettingsEvent
  | TaskEvent
  | TenantEvent
  | TimeEntryEvent
  | TimerEvent
  | AvatarEvent
  | CompanyLogoEvent
  | DocumentEvent
  | InvitationEvent
  | UserEvent
  | WebhookSubscriptionEvent
  | WorkRequestSettingsEvent
  | WorkRequestEvent
  | WorkflowEvent
  | WorkflowRotationEvent
  | WorkflowRunEvent;

export type AppEventType = AppEvent['type'];

/** The data of one event type (of the service's events, or of another union such as a test's). */
export type EventData<T extends E['type'], E extends DomainEvent = AppEvent> = Extract<E, { type: T }>['data'];

/** A stored event of one type, its data narrowed. */
export type RecordedOf<T extends E['type'], E extends DomainEvent = AppEvent> = RecordedEvent<EventData<T, E>> & { type: T };

/** A stored event of any type of the union, narrowed by checking `type`. */
export type AnyRecorded<E extends DomainEvent = AppEvent> = { [T in E['type']]: RecordedOf<T, E> }[E['type']];

/**
 * Every event type at run time (tests, tools): keyed by the union, so the compiler keeps
 * it complete and exact. A new event type must be added here, or nothing compiles.
 */
const EVERY_EVENT_TYPE: Record<AppEventType, true> = {
  AccountCreated: true,
  AccountDeleted: true,
  AccountUpdated: true,
  ApiKeyCreated: true,
  ApiKeyRevoked: true,
  AssociationLinked: true,
  AssociationUnlinked: true,
  AvatarUploaded: true,
  CompanyLogoUploaded: true,
  CompanyProfileChanged: true,
  ContactCreated: true,
  ContactDeleted: true,
  ContactLinkedToAccount: true,
  ContactTimelineCopied: true,
  ContactUnlinkedFromAccount: true,
  ContactUpdated: true,
  CustomFieldCreated: true,
  CustomFieldDeleted: true,
  CustomFieldGroupCreated: true,
  CustomFieldGroupDeleted: true,
  CustomFieldGroupUpdated: true,
  CustomFieldGroupsReordered: true,
  CustomFieldUpdated: true,
  CustomFieldsReordered: true,
  CustomTabCreated: true,
  CustomTabDeleted: true,
  CustomTabUpdated: true,
  CustomTabsReordered: true,
  DashboardShareCreated: true,
  DashboardWidgetAdded: true,
  DashboardWidgetRemoved: true,
  DashboardWidgetUpdated: true,
  DashboardWidgetsMoved: true,
  DashboardShareLinkCreated: true,
  DashboardShareLinkRevoked: true,
  DashboardShareRevoked: true,
  DepartmentCreated: true,
  DepartmentDeleted: true,
  DepartmentUpdated: true,
  DisqualificationReasonCreated: true,
  DisqualificationReasonDeleted: true,
  DisqualificationReasonUpdated: true,
  DocumentDeleted: true,
  DocumentUploaded: true,
  FieldValidationRulesChanged: true,
  ForecastCategoryCreated: true,
  ForecastCategoryDeleted: true,
  ForecastCategoryUpdated: true,
  FormCreated: true,
  FormDeleted: true,
  FormFieldOrderChanged: true,
  FormSubmitted: true,
  FormUpdated: true,
  FormWebhookRetried: true,
  IndustryCreated: true,
  IndustryDeleted: true,
  IndustryUpdated: true,
  InvitationAccepted: true,
  InvitationCancelled: true,
  InvitationResent: true,
  InvitationSent: true,
  LeadConverted: true,
  LeadCreated: true,
  LeadDeleted: true,
  LeadDisqualified: true,
  LeadFirstResponseRecorded: true,
  LeadPriorityCreated: true,
  LeadPriorityDeleted: true,
  LeadPriorityUpdated: true,
  LeadProductAdded: true,
  LeadProductRemoved: true,
  LeadProductUpdated: true,
  LeadScoreChanged: true,
  LeadSettingChanged: true,
  LeadSlaBreached: true,
  LeadSlaEscalated: true,
  LeadSourceCreated: true,
  LeadSourceDeleted: true,
  LeadSourceUpdated: true,
  LeadStageChanged: true,
  LeadTeamMemberAdded: true,
  LeadTeamMemberRemoved: true,
  LeadUpdated: true,
  ModuleLayoutSettingChanged: true,
  ModuleLayoutSettingReset: true,
  NoteAdded: true,
  QualificationFrameworkCreated: true,
  QualificationFrameworkDeleted: true,
  QualificationFrameworkUpdated: true,
  NotificationCreated: true,
  NotificationDismissed: true,
  NotificationPreferenceSet: true,
  NotificationRead: true,
  NotificationSettingsChanged: true,
  NotificationTemplateCreated: true,
  NotificationTemplateUpdated: true,
  NotificationTimeZoneSet: true,
  OpportunityCloseReasonCreated: true,
  OpportunityCloseReasonDeleted: true,
  OpportunityCloseReasonUpdated: true,
  OpportunityContactAdded: true,
  OpportunityContactRemoved: true,
  OpportunityContactUpdated: true,
  OpportunityCreated: true,
  OpportunityDeleted: true,
  OpportunityLineItemAdded: true,
  OpportunityLineItemRemoved: true,
  OpportunityLineItemUpdated: true,
  OpportunityLost: true,
  OpportunityPriorityCreated: true,
  OpportunityPriorityDeleted: true,
  OpportunityPriorityUpdated: true,
  OpportunityReopened: true,
  OpportunityStageChanged: true,
  OpportunityTeamMemberAdded: true,
  OpportunityTeamMemberRemoved: true,
  OpportunityTypeCreated: true,
  OpportunityTypeDeleted: true,
  OpportunityTypeUpdated: true,
  OpportunityUpdated: true,
  OpportunityWon: true,
  PipelineCreated: true,
  PipelineDeleted: true,
  PipelineStageCreated: true,
  PipelineStageDeleted: true,
  PipelineStageUpdated: true,
  PipelineUpdated: true,
  PriceBookCreated: true,
  PriceBookDeleted: true,
  PriceBookEntryAdded: true,
  PriceBookEntryRemoved: true,
  PriceBookEntryUpdated: true,
  PriceBookUpdated: true,
  ProductBundleItemAdded: true,
  ProductBundleItemRemoved: true,
  ProductCategoryCreated: true,
  ProductCategoryDeleted: true,
  ProductCategoryUpdated: true,
  ProductCreated: true,
  ProductDeleted: true,
  ProductUpdated: true,
  PushKeysGenerated: true,
  PushSubscribed: true,
  PushUnsubscribed: true,
  RecordTeamRoleCreated: true,
  RecordTeamRoleDeleted: true,
  RecordTeamRoleUpdated: true,
  ReportCreated: true,
  ReportDeleted: true,
  ReportFolderCreated: true,
  ReportFolderDeleted: true,
  ReportFolderUpdated: true,
  ReportScheduleAdded: true,
  ReportScheduleRemoved: true,
  ReportScheduleSent: true,
  ReportScheduleUpdated: true,
  ReportUpdated: true,
  RoleCreated: true,
  RoleDeleted: true,
  RoleUpdated: true,
  ScoringRuleCreated: true,
  ScoringRuleDeleted: true,
  ScoringRuleUpdated: true,
  SystemReportsSeeded: true,
  TablePreferencesReset: true,
  TablePreferencesSaved: true,
  TargetCreated: true,
  TargetDeleted: true,
  TargetUpdated: true,
  TaskBecameOverdue: true,
  TaskCompleted: true,
  TaskCreated: true,
  TaskDeleted: true,
  TaskPriorityCreated: true,
  TaskPriorityDeleted: true,
  TaskPriorityUpdated: true,
  TaskReopened: true,
  TaskSettingChanged: true,
  TaskStatusCreated: true,
  TaskStatusDeleted: true,
  TaskStatusUpdated: true,
  TaskTypeCreated: true,
  TaskTypeDeleted: true,
  TaskTypeUpdated: true,
  TaskUpdated: true,
  TeamCreated: true,
  TeamDeleted: true,
  TeamUpdated: true,
  TenantRegistered: true,
  TimeEntryCreated: true,
  TimeEntryDeleted: true,
  TimeEntryUpdated: true,
  TimerDiscarded: true,
  TimerStarted: true,
  TimerStopped: true,
  UserActivated: true,
  UserCreated: true,
  UserDeactivated: true,
  UserDashboardCreated: true,
  UserDashboardDeleted: true,
  UserDashboardUpdated: true,
  UserDeleted: true,
  UserEmailSignatureSet: true,
  UserLoggedIn: true,
  UserPasswordChanged: true,
  UserUpdated: true,
  WebhookSecretRotated: true,
  WebhookSubscriptionCreated: true,
  WebhookSubscriptionDeleted: true,
  WebhookSubscriptionUpdated: true,
  WorkRequestAccepted: true,
  WorkRequestAssigned: true,
  WorkRequestCancelled: true,
  WorkRequestCompleted: true,
  WorkRequestCreated: true,
  WorkRequestDeclined: true,
  WorkRequestDeleted: true,
  WorkRequestPipelineCreated: true,
  WorkRequestPipelineUpdated: true,
  WorkRequestReleased: true,
  WorkRequestReopened: true,
  WorkRequestStageChanged: true,
  WorkRequestStageCreated: true,
  WorkRequestStageUpdated: true,
  WorkRequestStarted: true,
  WorkRequestTypeCreated: true,
  WorkRequestTypeUpdated: true,
  WorkRequestUpdated: true,
  WorkflowCreated: true,
  WorkflowDeleted: true,
  WorkflowOwnerPicked: true,
  WorkflowRevised: true,
  WorkflowRunCompleted: true,
  WorkflowRunFailed: true,
  WorkflowRunStarted: true,
  WorkflowRunWaiting: true,
  WorkflowStepCompleted: true,
  WorkflowStepFailed: true,
  WorkflowToggled: true,
};

export const APP_EVENT_TYPES: readonly AppEventType[] = Object.keys(EVERY_EVENT_TYPE) as AppEventType[];
