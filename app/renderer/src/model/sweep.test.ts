import { expect, it } from "vitest";
import { mergeSweep, parseSweep } from "./reduce.js";

it("reads lesson 12's sweep: MB/s where measured, packets per message always (MBps null where no time passed)", () => {
  const logged = [
    { bytes: 64, ms: 2, MBps: 32, packets_per_msg: 2 },
    { bytes: 65536, ms: 4, MBps: 1000, packets_per_msg: 65 },
    { bytes: 4096, ms: 0, MBps: null, packets_per_msg: 5 },
  ];
  expect(parseSweep(`sweep ${JSON.stringify(logged)}`)).toEqual([
    { bytes: 64, gbps: 0.256, packetsPerMsg: 2 },
    { bytes: 65536, gbps: 8, packetsPerMsg: 65 },
    { bytes: 4096, packetsPerMsg: 5 },
  ]);
});

it("reads a single point in Gb/s, and ignores other log lines and points with nothing measured", () => {
  expect(parseSweep('sweep {"bytes":4096,"gbps":9.3}')).toEqual([{ bytes: 4096, gbps: 9.3 }]);
  expect(parseSweep('sweep {"bytes":4096,"MBps":null}')).toEqual([]);
  expect(parseSweep("sizes 6")).toEqual([]);
});

it("a rerun's points replace the same sizes' old ones, smallest size first", () => {
  const old = [
    { bytes: 64, packetsPerMsg: 2 },
    { bytes: 1024, packetsPerMsg: 2 },
  ];
  expect(
    mergeSweep(old, [
      { bytes: 1024, packetsPerMsg: 3 },
      { bytes: 256, packetsPerMsg: 2 },
    ]),
  ).toEqual([
    { bytes: 64, packetsPerMsg: 2 },
    { bytes: 256, packetsPerMsg: 2 },
    { bytes: 1024, packetsPerMsg: 3 },
  ]);
});
