import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { importTranscript } from "../transcript.js";
import { cBuild, toC } from "./c.js";

const t = importTranscript(readFileSync(new URL("./fixtures/rc-loopback.sim.jsonl", import.meta.url), "utf8"));
const header = (c: string) => c.slice(0, c.indexOf("*/"));

describe("the C export's build line", () => {
  it("names the file the program is saved as, and the binary it makes", () => {
    const c = toC(t, { fileName: "foo.c" });
    expect(header(c)).toContain(" * Build: cc foo.c -libverbs -o foo     Run: ./foo (needs an RDMA device");
    expect(header(c)).not.toContain("prog");
  });

  it("without a file name (printed): says to save it as prog.c, and how to build that", () => {
    expect(header(toC(t))).toContain(
      " * Build (save this output as prog.c first): cc prog.c -libverbs -o prog     Run: ./prog",
    );
  });

  it("quotes names the shell would split, and compiles a file not ending in .c as C", () => {
    expect(cBuild("my run.c")).toEqual({ command: "cc 'my run.c' -libverbs -o 'my run'", run: "./'my run'" });
    expect(cBuild("it's.c").command).toBe(`cc 'it'\\''s.c' -libverbs -o 'it'\\''s'`);
    expect(cBuild("run.txt").command).toBe("cc -x c run.txt -libverbs -o run");
    expect(cBuild("prog").command).toBe("cc -x c prog -libverbs -o prog.out");
    expect(cBuild("out/run.c")).toEqual({ command: "cc out/run.c -libverbs -o out/run", run: "out/run" });
    expect(cBuild("-x.c")).toEqual({ command: "cc ./-x.c -libverbs -o ./-x", run: "./-x" });
  });

  it("a file name cannot end the header comment early", () => {
    const c = toC(t, { fileName: "a*/b.c" });
    expect(header(c)).toContain("Build: cc 'a* /b.c'");
    expect(c.indexOf("*/")).toBeGreaterThan(c.indexOf("Build:"));
  });
});
