import { BadRequestException, Body, Controller, Get, Post, Query } from '@nestjs/common';
import { IdService } from 'nestjs-snowflake';
import { NotesService, type AuditNote } from './notes.service.js';

/** The body of POST /notes. */
export interface CreateNoteBody {
  text?: unknown;
  /** The ID of what the note is about, as a decimal string. */
  subjectId?: unknown;
}

@Controller('notes')
export class NotesController {
  constructor(
    private readonly notes: NotesService,
    private readonly ids: IdService,
  ) {}

  @Post()
  create(@Body() body: CreateNoteBody): Promise<AuditNote> {
    if (typeof body?.text !== 'string' || body.text.trim() === '') {
      throw new BadRequestException('text: expected a non-empty string.');
    }
    return this.notes.create(body.text, this.subject(body.subjectId));
  }

  /** All notes, or those about `?subject=<id>`. */
  @Get()
  list(@Query('subject') subject?: string): Promise<AuditNote[]> {
    return this.notes.list(this.subject(subject) ?? undefined);
  }

  /** Malformed IDs throw InvalidSnowflakeError, answered with 400. */
  private subject(value: unknown): bigint | null {
    if (value === undefined || value === null || value === '') return null;
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new BadRequestException('subjectId: expected an ID.');
    return this.ids.decode(value).id;
  }
}
