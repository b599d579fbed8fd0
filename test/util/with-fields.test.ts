import { describe, expect, it } from 'vitest';
import { withFields } from '../../src/util/with-fields.js';

describe('withFields', () => {
  it('answers what a spread would: a new object, base first, the fields after and over it', () => {
    const base = { read: 'html', method: 'GET', digest: false };
    const out = withFields(base, { digest: true, guard: 'g' });
    expect(out).toEqual({ ...base, digest: true, guard: 'g' });
    expect(Object.keys(out)).toEqual(Object.keys({ ...base, digest: true, guard: 'g' }));
    expect(out).not.toBe(base);
    expect(base).toEqual({ read: 'html', method: 'GET', digest: false });
  });

  it('copies own fields only, as a spread does', () => {
    const proto = { inherited: 1 };
    const base = Object.assign(Object.create(proto) as { own: number }, { own: 2 });
    expect(withFields(base, {})).toEqual({ own: 2 });
  });
});
