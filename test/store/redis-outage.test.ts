import { describe, expect, it } from 'vitest';
import { RedisOutage } from '../../src/store/redis-outage.js';

class ReplyError extends Error {}

function outage(closed = false) {
  const events: string[] = [];
  const o = new RedisOutage({
    closed: () => closed,
    isReply: (err) => err instanceof ReplyError,
    onLost: (err) => events.push(`lost: ${err.message}`),
    onReconnected: () => events.push('back'),
  });
  return { o, events };
}

/** A send that fails with the given errors, one per call, then answers "ok". */
function failing(...errors: Error[]) {
  let calls = 0;
  const send = () => {
    const err = errors[calls++];
    return err ? Promise.reject(err) : Promise.resolve('ok');
  };
  return { send, calls: () => calls };
}

describe('RedisOutage', () => {
  it('sends again while the connection is lost, and says so once when it begins and once when it ends', async () => {
    const { o, events } = outage();
    const s = failing(new Error('ECONNREFUSED'), new Error('ECONNREFUSED'));
    await expect(o.untilAnswered(s.send)).resolves.toBe('ok');
    expect(s.calls()).toBe(3);
    expect(events).toEqual(['lost: ECONNREFUSED', 'back']);
  });

  it('waits out the errors Redis answers while it cannot serve yet (LOADING, BUSY, failovers)', async () => {
    const { o } = outage();
    const s = failing(new ReplyError('LOADING Redis is loading the dataset in memory'), new ReplyError('TRYAGAIN'));
    await expect(o.untilAnswered(s.send)).resolves.toBe('ok');
    expect(s.calls()).toBe(3);
  });

  it('throws any other error Redis answers at once, and every error once the store is closed', async () => {
    const { o, events } = outage();
    const s = failing(new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'));
    await expect(o.untilAnswered(s.send)).rejects.toThrow(/^WRONGTYPE/);
    expect(s.calls()).toBe(1);
    expect(events).toEqual([]);
    const closed = outage(true);
    await expect(closed.o.untilAnswered(failing(new Error('ECONNRESET')).send)).rejects.toThrow('ECONNRESET');
  });

  it('uses a send already under way first', async () => {
    const { o } = outage();
    let sent = 0;
    await expect(o.untilAnswered(() => Promise.resolve(`resent ${++sent}`), Promise.resolve('first'))).resolves.toBe('first');
    expect(sent).toBe(0);
  });
});
