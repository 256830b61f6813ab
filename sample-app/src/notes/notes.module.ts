import { Module } from '@nestjs/common';
import { NotesController } from './notes.controller.js';
import { NotesPrisma } from './notes.prisma.js';
import { NotesService } from './notes.service.js';

/** Audit notes stored through Prisma with the snowflake client extension. */
@Module({
  controllers: [NotesController],
  providers: [NotesPrisma, NotesService],
})
export class NotesModule {}
