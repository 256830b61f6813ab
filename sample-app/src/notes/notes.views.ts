import { ApiProperty } from '@nestjs/swagger';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';

/** The body of POST /notes; the controller checks it. */
export class CreateNoteBody {
  @ApiProperty({ type: String })
  text?: unknown;

  @ApiSnowflakeId({ required: false, description: 'The ID of what the note is about, as a decimal string' })
  subjectId?: unknown;
}

/** An audit note as the API answers it: bigints become decimal strings (BigIntSerializerInterceptor). */
export class AuditNoteView {
  @ApiSnowflakeId()
  id!: bigint;

  @ApiSnowflakeId({ nullable: true, description: 'What the note is about' })
  subjectId!: bigint | null;

  @ApiProperty()
  text!: string;
}
