import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Order } from './order.entity.js';
import { User } from './user.entity.js';
import { OrdersController } from './orders.controller.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

/**
 * Users and their orders through TypeORM; `@GeneratedId()` fills every primary key. Orders are also found by their
 * reference, the ID in base32 with the `ord_` prefix.
 */
@Module({
  imports: [TypeOrmModule.forFeature([User, Order])],
  controllers: [UsersController, OrdersController],
  providers: [UsersService],
})
export class UsersModule {}
