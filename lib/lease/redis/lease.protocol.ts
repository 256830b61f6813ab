import type { LeaseKeys } from '../lease.keys.js';
import type { LeaseSettings } from '../lease.settings.js';
import { claimArgs, decodeClaim, type ClaimReply, type ClaimRequest } from './scripts/claim.reply.js';
import { decodeNote, noteArgs, type NoteReply } from './scripts/note.script.js';
import { decodeRelease, releaseArgs, type ReleaseReply } from './scripts/release.script.js';
import { decodeRenew, renewArgs, type RenewReply, type RenewRequest } from './scripts/renew.script.js';

export type { ClaimReply, ClaimRequest } from './scripts/claim.reply.js';
export type { NoteReply } from './scripts/note.script.js';
export type { ServerStamp } from './scripts/prelude.lua.js';
export type { ReleaseReply } from './scripts/release.script.js';
export type { RenewReply, RenewRequest } from './scripts/renew.script.js';

/**
 * The scripts of one namespace: its keys, and each script's arguments and reply decoder (which live beside the
 * script's Lua in `scripts/`). Nothing else indexes a reply array.
 */
export class LeaseProtocol {
  constructor(
    private readonly keys: LeaseKeys,
    private readonly settings: Pick<LeaseSettings, 'ttlMs' | 'config' | 'idCount' | 'fenceMarginMs'>,
  ) {}

  /** KEYS of a script that touches the record of `id`: meta, cursor, expiry, the record. */
  scriptKeys(id: number): string[] {
    return [this.keys.meta, this.keys.cursor, this.keys.expiry, this.recordKey(id)];
  }

  recordKey(id: number): string {
    return this.keys.recordPrefix + id;
  }

  claimArgs(request: ClaimRequest): (string | number)[] {
    return claimArgs(this.settings, request);
  }

  renewArgs(request: RenewRequest, freshToken: string): (string | number)[] {
    return renewArgs(this.settings, request, freshToken);
  }

  releaseArgs(id: number, token: string, lastMs: number, freshToken: string): (string | number)[] {
    return releaseArgs(this.settings, id, token, lastMs, freshToken);
  }

  noteArgs(id: number, lastMs: number, freshToken: string): (string | number)[] {
    return noteArgs(this.settings, id, lastMs, freshToken);
  }

  static decodeClaim(reply: unknown[]): ClaimReply {
    return decodeClaim(reply);
  }

  static decodeRenew(reply: unknown[]): RenewReply {
    return decodeRenew(reply);
  }

  static decodeRelease(reply: unknown[]): ReleaseReply {
    return decodeRelease(reply);
  }

  static decodeNote(reply: unknown[]): NoteReply {
    return decodeNote(reply);
  }
}
