import { BadRequestException, Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse } from '@nestjs/swagger';
import { IdService } from 'nestjs-snowflake';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';
import { NotesService, type AuditNote } from './notes.service.js';
import { AuditNoteView, CreateNoteBody } from './notes.views.js';

@Controller('notes')
export class NotesController {
  constructor(
    private readonly notes: NotesService,
    private readonly ids: IdService,
  ) {}

  @Post()
  @ApiCreatedResponse({ type: AuditNoteView })
  create(@Body() body: CreateNoteBody): Promise<AuditNote> {
    if (typeof body?.text !== 'string' || body.text.trim() === '') {
      throw new BadRequestException('text: expected a non-empty string.');
    }
    return this.notes.create(body.text, this.subject(body.subjectId));
  }

  /** All notes, or those about `?subject=<id>`. */
  @Get()
  @ApiOkResponse({ type: [AuditNoteView] })
  list(
    @Query('subject') @ApiSnowflakeId({ required: false, description: 'Only notes about this ID' }) subject?: string,
  ): Promise<AuditNote[]> {
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
