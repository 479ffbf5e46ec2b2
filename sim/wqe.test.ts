import { describe, expect, it } from "vitest";
import { Ring } from "./wqe.js";

describe("Ring", () => {
  it("keeps each live slot object at its counter value across growth, and reuses freed ones", () => {
    let made = 0;
    const ring = new Ring<{ id: number }>(1023, () => ({ id: made++ }));
    const live: { id: number }[] = [];
    // Slide a window of 10, then widen it to 200 (growth with live entries in a wrapped ring).
    for (let i = 0; i < 50; i++) {
      live.push(ring.producerSlot());
      ring.advance();
      if (ring.count > 10) {
        expect(ring.head()).toBe(live[ring.cons]);
        ring.pop();
      }
    }
    for (let i = 0; i < 200; i++) {
      live.push(ring.producerSlot());
      ring.advance();
    }
    for (let i = ring.cons; i < ring.prod; i++) expect(ring.at(i)).toBe(live[i]);
    expect(new Set(live.slice(ring.cons)).size).toBe(ring.count);
    expect(made).toBeLessThanOrEqual(256);
    while (ring.count > 0) {
      expect(ring.head()).toBe(live[ring.cons]);
      ring.pop();
    }
    expect(ring.head()).toBeNull();
    expect(ring.full).toBe(false);
  });
});
