import { defineConfig } from "vitest/config";

const exclude = ["**/node_modules/**", "**/dist/**", "**/build/**", ".vm/**"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    projects: [
      { extends: true, test: { name: "all", include: ["**/*.test.ts", "**/*.test.tsx"], exclude } },
      // The conformance suite once more on the simulator with its packet log off, where the
      // fast paths (sim/fast-path.ts) carry the traffic: they must conform just the same.
      {
        extends: true,
        test: {
          name: "conformance-log-off",
          include: ["verbs/conformance/**/*.test.ts"],
          exclude,
          env: { VERBSLAB_SIM_PACKET_LOG: "off" },
        },
      },
    ],
  },
});
