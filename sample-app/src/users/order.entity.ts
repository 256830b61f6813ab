import { ApiProperty } from '@nestjs/swagger';
import { AfterInsert, AfterLoad, Column, Entity, ManyToOne, type Relation } from 'typeorm';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';
import { GeneratedId } from 'nestjs-snowflake/typeorm';
import { orderReference } from './order-reference.js';
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

  /** Not a column: the ID in the order-reference form, set whenever an order is loaded or inserted. */
  @ApiSnowflakeId({ form: orderReference, description: 'The order’s reference, for customers and support' })
  reference!: string;

  @ManyToOne(() => User, (user) => user.orders, { nullable: false, onDelete: 'CASCADE' })
  // Relation<> keeps the circular import out of the emitted decorator metadata (ESM would meet User uninitialised).
  user?: Relation<User>;

  @AfterLoad()
  @AfterInsert()
  protected setReference(): void {
    this.reference = orderReference.format(BigInt(this.id));
  }
}
