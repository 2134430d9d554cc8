import { describe, expect, it } from 'vitest';
import { createRecencyOrder } from './recency-order.ts';

type Item = { name: string; at: string };
const at = (second: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, second)).toISOString();

describe('createRecencyOrder', () => {
  it('lists newest first, keeping the given order among items of the same time', () => {
    const order = createRecencyOrder<Item>({
      timeOf: (item) => item.at,
      initial: [
        { name: 'old', at: at(1) },
        { name: 'new', at: at(3) },
        { name: 'tie-a', at: at(2) },
        { name: 'tie-b', at: at(2) },
      ],
    });
    expect(order.items().map((item) => item.name)).toEqual(['new', 'tie-a', 'tie-b', 'old']);
  });

  it('moves a changed item to where its new time belongs, forward or back, and adds and removes', () => {
    const items = [1, 2, 3, 4, 5].map((second) => ({ name: `s${second}`, at: at(second) }));
    const order = createRecencyOrder<Item>({ timeOf: (item) => item.at, initial: items });
    const [first, second] = items as [Item, Item];
    first.at = at(9);
    order.moved(first);
    expect(order.items().map((item) => item.name)).toEqual(['s1', 's5', 's4', 's3', 's2']);
    first.at = at(0);
    order.moved(first);
    order.remove(second);
    order.add({ name: 'mid', at: at(3) });
    expect(order.items().map((item) => item.name)).toEqual(['s5', 's4', 'mid', 's3', 's1']);
  });

  it('stays sorted through many random changes', () => {
    const items = Array.from({ length: 200 }, (_, index) => ({ name: `s${index}`, at: at(index % 60) }));
    const order = createRecencyOrder<Item>({ timeOf: (item) => item.at, initial: items });
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 1_000; round += 1) {
      const item = items[Math.floor(random() * items.length)] as Item;
      item.at = at(Math.floor(random() * 60));
      order.moved(item);
    }
    const times = order.items().map((item) => item.at);
    expect(times).toEqual([...times].sort().reverse());
    expect(order.items()).toHaveLength(200);
  });
});
