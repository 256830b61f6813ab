import type { LoggerService } from '@nestjs/common';
import type {
  ClaimReply,
  ClaimRequest,
  NoteReply,
  ReleaseReply,
  RenewReply,
  RenewRequest,
  ServerStamp,
} from './redis/lease.protocol.js';

/**
 * Where leases live: the four operations of the lease scripts, with their replies decoded, and the confirmation
 * that the server which answered is the one the others will ask next. Redis implements it (`redis/`); the lease's
 * fast tests run the same coordinator against an in-memory one, and the simulator against a model. The requests and
 * replies are the Redis scripts' (`redis/lease.protocol.ts`), which every backend answers alike.
 */
export interface LeaseBackend {
  /** Resolves once connected, or after `timeoutMs` (the next call then reports the failure). */
  connect(timeoutMs: number): Promise<void>;
  claim(request: Omit<ClaimRequest, 'host' | 'pid'>): Promise<ClaimReply>;
  renew(request: RenewRequest): Promise<RenewReply>;
  release(id: number, token: string, lastMs: number): Promise<ReleaseReply>;
  note(id: number, lastMs: number): Promise<NoteReply>;
  /**
   * Undefined when the server that sent `reply` is confirmed as the primary (and, with `waitForReplicas`, enough
   * replicas acknowledged the writes so far); else why not. Called after every claim and renewal.
   */
  confirm(reply: ServerStamp, what: string): Promise<string | undefined>;
  /** Says at bootstrap where the backend's set-up falls short of what the guarantees need. */
  checkSetup?(logger: LoggerService): Promise<void>;
  /** The key the process-wide registry tracks a leased ID under (the same ID in two namespaces differs). */
  recordKey(id: number): string;
  close(): Promise<void>;
}
