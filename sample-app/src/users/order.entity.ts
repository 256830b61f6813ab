import { ApiProperty } from '@nestjs/swagger';
import { Column, Entity, ManyToOne, type Relation } from 'typeorm';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';
import { GeneratedId } from 'nestjs-snowflake/typeorm';
import { User } from './user.entity.js';

/** An order of a user. Its ID is a snowflake held as a decimal string, the type most JSON APIs want. */
@Entity({ name: 'orders' })
export class Order {
  @GeneratedId()
  @ApiSnowflakeId()
  id!: string;

  @Column({ type: 'varchar', length: 200 })
  @ApiProperty()
  item!: string;

  @Column({ type: 'integer' })
  @ApiProperty()
  quantity!: number;

  @ManyToOne(() => User, (user) => user.orders, { nullable: false, onDelete: 'CASCADE' })
  // Relation<> keeps the circular import out of the emitted decorator metadata (ESM would meet User uninitialised).
  user?: Relation<User>;
}
