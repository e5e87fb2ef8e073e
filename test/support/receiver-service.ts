import { HttpReceiver } from './http-receiver.js';
import { registerTenant, type Session } from './identity.js';
import { startTestService, type TestService } from './service.js';

/** A test service allowed to call a fresh loopback receiver, and two tenants (their admins); no scheduled jobs. */
export interface ReceiverService {
  service: TestService;
  receiver: HttpReceiver;
  admin: Session;
  other: Session;
  stop(): Promise<void>;
}

export async function startReceiverService(env: Record<string, string> = {}): Promise<ReceiverService> {
  const receiver = await HttpReceiver.start();
  const service = await startTestService({ OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`, ...env }, { schedule: false });
  const admin = await registerTenant(service);
  const other = await registerTenant(service);
  return {
    service,
    receiver,
    admin,
    other,
    stop: async () => {
      await service.stop();
      await receiver.stop();
    },
  };
}
