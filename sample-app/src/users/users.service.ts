import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IdService } from 'nestjs-snowflake';
import { Between, QueryFailedError, Repository } from 'typeorm';
import { orderReference } from './order-reference.js';
import { Order } from './order.entity.js';
import { User } from './user.entity.js';

/** What POST /users accepts, after validation. */
export interface NewUser {
  email: string;
  name: string;
  orders: NewOrder[];
}

/** What POST /users/:id/orders accepts, after validation. */
export interface NewOrder {
  item: string;
  quantity: number;
}

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly ids: IdService,
  ) {}

  /** Saves the user and its orders in one cascade; every row gets its own ID on insert. 409 for a taken email. */
  async create(input: NewUser): Promise<User> {
    try {
      return await this.users.save(this.users.create(input));
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictException(`A user with email ${input.email} exists already.`);
      throw error;
    }
  }

  async findOne(id: bigint): Promise<User> {
    const user = await this.users.findOne({
      where: { id },
      relations: { orders: true },
      order: { orders: { id: 'ASC' } },
    });
    if (user === null) throw new NotFoundException(`No user ${id}.`);
    return user;
  }

  /**
   * Users created between two instants, without a `created_at` column: an ID carries its creation time, so the
   * range is an index range on the primary key, from the smallest ID of `from` to the largest ID of `to`.
   */
  createdBetween(from: Date, to: Date): Promise<User[]> {
    return this.users.find({
      where: { id: Between(this.ids.minIdAt(from), this.ids.maxIdAt(to)) },
      order: { id: 'ASC' },
    });
  }

  async findOrder(id: bigint): Promise<Order> {
    const order = await this.orders.findOneBy({ id: String(id) });
    if (order === null) throw new NotFoundException(`No order ${orderReference.format(id)}.`);
    return order;
  }

  async addOrder(userId: bigint, input: NewOrder): Promise<Order> {
    const user = await this.users.findOneBy({ id: userId });
    if (user === null) throw new NotFoundException(`No user ${userId}.`);
    const order = await this.orders.save(this.orders.create({ ...input, user }));
    delete order.user;
    return order;
  }
}

/** A unique constraint failed: SQLite (better-sqlite3) and PostgreSQL name it differently. */
function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const code = (error.driverError as { code?: unknown } | undefined)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
