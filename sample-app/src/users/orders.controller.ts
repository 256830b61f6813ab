import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { SnowflakeIdParam } from 'nestjs-snowflake/http';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';
import { orderReference } from './order-reference.js';
import { Order } from './order.entity.js';
import { UsersService } from './users.service.js';

@Controller('orders')
export class OrdersController {
  constructor(private readonly users: UsersService) {}

  /**
   * An order by its reference (`ord_…`, as responses carry it). A malformed reference answers 400 naming the
   * position of the first wrong character; a well-formed one that names no order, 404.
   */
  @Get(':ref')
  @ApiOkResponse({ type: Order })
  findByReference(
    @SnowflakeIdParam('ref', { form: orderReference })
    @ApiSnowflakeId({ form: orderReference, description: 'The order’s reference' })
    id: bigint,
  ): Promise<Order> {
    return this.users.findOrder(id);
  }
}
