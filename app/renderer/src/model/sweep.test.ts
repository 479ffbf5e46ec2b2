import { expect, it } from "vitest";
import { parseSweep } from "./reduce.js";

it("reads lesson 12's sweep: an array of points with MBps (null on the simulator is left out)", () => {
  const logged = [
    { bytes: 64, ms: 2, MBps: 32, packets_per_msg: 1 },
    { bytes: 65536, ms: 4, MBps: 1000, packets_per_msg: 64 },
    { bytes: 4096, ms: 0, MBps: null, packets_per_msg: 4 },
  ];
  expect(parseSweep(`sweep ${JSON.stringify(logged)}`)).toEqual([
    { bytes: 64, gbps: 0.256 },
    { bytes: 65536, gbps: 8 },
  ]);
});

it("reads a single point in Gb/s, and ignores other log lines", () => {
  expect(parseSweep('sweep {"bytes":4096,"gbps":9.3}')).toEqual([{ bytes: 4096, gbps: 9.3 }]);
  expect(parseSweep("sizes 6")).toEqual([]);
});
