/**
 * Items newest first by an ISO time, kept sorted as they change: a changed item moves with one search
 * and two splices, so a busy session never makes the next listing sort every session again.
 */
export type RecencyOrder<T> = {
  /** Newest first; the caller must not change the array. */
  items(): readonly T[];
  add(item: T): void;
  remove(item: T): void;
  /** `item`'s time changed: puts it where it now belongs. */
  moved(item: T): void;
};

export function createRecencyOrder<T>(options: {
  /** An ISO time: such times order as strings. */
  timeOf: (item: T) => string;
  /** The items at the start, in any order. */
  initial: Iterable<T>;
}): RecencyOrder<T> {
  const { timeOf } = options;
  // A stable sort: items of the same time keep their given order.
  const items = [...options.initial].sort((a, b) => (timeOf(a) < timeOf(b) ? 1 : timeOf(a) > timeOf(b) ? -1 : 0));

  /** The first index whose item is not newer than `time` (the newest-first list is searched by halves). */
  function positionOf(time: string): number {
    let low = 0;
    let high = items.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (timeOf(items[middle] as T) > time) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  function insert(item: T): void {
    items.splice(positionOf(timeOf(item)), 0, item);
  }

  function remove(item: T): void {
    // Changed items are nearly always among the newest: look from the front.
    const index = items.indexOf(item);
    if (index !== -1) items.splice(index, 1);
  }

  return {
    items: () => items,
    add: insert,
    remove,
    moved(item) {
      remove(item);
      insert(item);
    },
  };
}
