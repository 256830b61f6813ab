import { ApiProperty } from '@nestjs/swagger';
import { Column, Entity, OneToMany, type Relation } from 'typeorm';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';
import { GeneratedId } from 'nestjs-snowflake/typeorm';
import { Order } from './order.entity.js';

/** A user. Its ID is a snowflake held as a bigint; JSON renders it as a decimal string. */
@Entity({ name: 'users' })
export class User {
  @GeneratedId()
  @ApiSnowflakeId()
  id!: bigint;

  @Column({ type: 'varchar', length: 200, unique: true })
  @ApiProperty()
  email!: string;

  @Column({ type: 'varchar', length: 200 })
  @ApiProperty()
  name!: string;

  @ApiProperty({ type: () => [Order], required: false })
  @OneToMany(() => Order, (order) => order.user, { cascade: ['insert'] })
  orders?: Relation<Order>[];
}
