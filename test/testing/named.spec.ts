import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IdService, InjectIdService } from '../../lib/index.js';
import { ManualClock, SnowflakeTestingModule } from '../../lib/testing.js';

@Injectable()
class Checkout {
  constructor(
    readonly ids: IdService,
    @InjectIdService('orders') readonly orderIds: IdService,
  ) {}
}

describe('SnowflakeTestingModule for named registrations', () => {
  it('stands in for a named registration beside the default one, each on its own worker and clock', async () => {
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const moduleRef = await Test.createTestingModule({
      imports: [
        SnowflakeTestingModule.forRoot({ workerId: 1 }),
        SnowflakeTestingModule.forRoot({ name: 'orders', workerId: 2, layout: 'twitter', clock }),
      ],
      providers: [Checkout],
    }).compile();
    await moduleRef.init();
    try {
      const { ids, orderIds } = moduleRef.get(Checkout);
      expect(ids.decode(ids.next()).workerId).toBe(1);
      expect(orderIds.decode(orderIds.next())).toMatchObject({ workerId: 2, timestamp: Date.UTC(2026, 5, 1) });
      expect(orderIds.layout.datacenterBits).toBe(5);
    } finally {
      await moduleRef.close();
    }
  });
});
