import { Injectable } from '@nestjs/common';
import { NotesPrisma } from './notes.prisma.js';

/** An audit note as stored: its ID (a snowflake) tells when it was written. */
export interface AuditNote {
  id: bigint;
  subjectId: bigint | null;
  text: string;
}

/** Audit notes through Prisma; IDs come from the snowflake extension, not from the caller. */
@Injectable()
export class NotesService {
  constructor(private readonly prisma: NotesPrisma) {}

  create(text: string, subjectId: bigint | null): Promise<AuditNote> {
    return this.prisma.client.auditNote.create({ data: { text, subjectId } });
  }

  /** Notes in the order they were written: snowflake IDs sort by time. */
  list(subjectId?: bigint): Promise<AuditNote[]> {
    return this.prisma.client.auditNote.findMany({
      where: subjectId === undefined ? {} : { subjectId },
      orderBy: { id: 'asc' },
    });
  }
}
