import { Column, Entity, OneToMany, type Relation } from 'typeorm';
import { GeneratedId } from 'nestjs-snowflake/typeorm';
import { Order } from './order.entity.js';

/** A user. Its ID is a snowflake held as a bigint; JSON renders it as a decimal string. */
@Entity({ name: 'users' })
export class User {
  @GeneratedId()
  id!: bigint;

  @Column({ type: 'varchar', length: 200, unique: true })
  email!: string;

  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @OneToMany(() => Order, (order) => order.user, { cascade: ['insert'] })
  orders?: Relation<Order>[];
}
