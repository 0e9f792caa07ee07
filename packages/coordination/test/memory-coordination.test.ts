import { coordination, inMemoryCoordination, ManualScheduler } from '../src/index.js';
import { describeCoordinationContract } from './support/coordination-contract.js';
import { drivenFixture, FakeClock, MemoryBackupStore } from './support/memory-fixture.js';

describeCoordinationContract('in-memory fake', {
  ttlMs: 1000,
  async fresh() {
    const clock = new FakeClock();
    const scheduler = new ManualScheduler();
    return {
      coordination: inMemoryCoordination({ now: clock.now, scheduler }),
      ...drivenFixture(clock, scheduler),
    };
  },
});

describeCoordinationContract('mode 1 (single node, backed up)', {
  ttlMs: 1000,
  async fresh() {
    const clock = new FakeClock();
    const scheduler = new ManualScheduler();
    const c = await coordination({
      mode: 1,
      backup: { store: new MemoryBackupStore() },
      now: clock.now,
      scheduler,
    });
    return { coordination: c, ...drivenFixture(clock, scheduler) };
  },
});
