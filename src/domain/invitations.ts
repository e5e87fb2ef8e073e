export type InvitationStatus = 'pending' | 'accepted' | 'cancelled' | 'expired';

/**
 * What an invitation's status reads as at `now`: a pending invitation past its expiry has
 * expired; one that never existed reads as cancelled. The same rule for the decider and
 * the invitation list.
 */
export function invitationStatusAt(stored: 'absent' | 'pending' | 'accepted' | 'cancelled', expiresAt: string | Date, now: Date): InvitationStatus {
  if (stored === 'pending' && new Date(expiresAt) <= now) return 'expired';
  return stored === 'absent' ? 'cancelled' : stored;
}
