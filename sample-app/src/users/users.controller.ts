import { BadRequestException, Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import { IdService } from 'nestjs-snowflake';
import { ParseSnowflakeIdPipe } from 'nestjs-snowflake/http';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';
import { Order } from './order.entity.js';
import { User } from './user.entity.js';
import { UsersService, type NewOrder, type NewUser } from './users.service.js';

@Controller('users')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly ids: IdService,
  ) {}

  /** Body: `{ email, name, orders?: [{ item, quantity }] }`. */
  @Post()
  @ApiCreatedResponse({ type: User })
  create(@Body() body: unknown): Promise<User> {
    const input = object(body, 'body');
    const orders = input.orders === undefined ? [] : input.orders;
    if (!Array.isArray(orders)) throw new BadRequestException('orders: expected an array.');
    const user: NewUser = {
      email: text(input.email, 'email'),
      name: text(input.name, 'name'),
      orders: orders.map((order, i) => newOrder(order, `orders[${i}]`)),
    };
    return this.users.create(user);
  }

  /**
   * Users created in a time range: `?from=` and `?to=` as ISO 8601 or Unix milliseconds; `from` defaults to the
   * layout's epoch and `to` to now. A range reaching past the layout's ends is cut to them by minIdAt / maxIdAt.
   */
  @Get()
  @ApiOkResponse({ type: [User] })
  @ApiQuery({ name: 'from', required: false, description: 'ISO 8601 or Unix milliseconds' })
  @ApiQuery({ name: 'to', required: false, description: 'ISO 8601 or Unix milliseconds' })
  list(@Query('from') from?: string, @Query('to') to?: string): Promise<User[]> {
    const start = from ? instant(from, 'from') : new Date(this.ids.layout.epoch);
    const end = to ? instant(to, 'to') : new Date();
    if (start > end) throw new BadRequestException('from must not be after to.');
    return this.users.createdBetween(start, end);
  }

  @Get(':id')
  @ApiOkResponse({ type: User })
  findOne(@Param('id', ParseSnowflakeIdPipe) @ApiSnowflakeId({ description: 'The user' }) id: bigint): Promise<User> {
    return this.users.findOne(id);
  }

  /** Body: `{ item, quantity }`. */
  @Post(':id/orders')
  @ApiCreatedResponse({ type: Order })
  addOrder(
    @Param('id', ParseSnowflakeIdPipe) @ApiSnowflakeId({ description: 'The user' }) id: bigint,
    @Body() body: unknown,
  ): Promise<Order> {
    return this.users.addOrder(id, newOrder(body, 'body'));
  }
}

function object(value: unknown, name: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadRequestException(`${name}: expected a JSON object.`);
  }
  return value as Record<string, unknown>;
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
    throw new BadRequestException(`${name}: expected a non-empty string of at most 200 characters.`);
  }
  return value;
}

function newOrder(value: unknown, name: string): NewOrder {
  const order = object(value, name);
  const quantity = order.quantity;
  if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1) {
    throw new BadRequestException(`${name}.quantity: expected a positive integer.`);
  }
  return { item: text(order.item, `${name}.item`), quantity };
}

function instant(value: string, name: string): Date {
  const date = /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new BadRequestException(
      `${name}: expected an ISO 8601 date or Unix milliseconds, got ${JSON.stringify(value)}.`,
    );
  }
  return date;
}
