// Lint guards the layer boundaries of ARCHITECTURE.md and nothing else: formatting is
// Prettier's job and types are tsc's.
import tseslint from "typescript-eslint";

const nodeBuiltins = ["node:*", "fs", "path", "child_process", "os", "net", "worker_threads"];
const restrict = (patterns, message) => ({
  "no-restricted-imports": ["error", { patterns: [{ group: patterns, message }] }],
});

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      "dist/**",
      "build/**",
      "native/build/**",
      "native/*.bundle.mjs",
      ".vm/**",
      "test-results/**",
    ],
  },
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: { parser: tseslint.parser },
  },
  {
    files: ["verbs/**/*.ts"],
    ignores: ["verbs/conformance/**"],
    rules: restrict(
      ["**/sim/**", "**/native/**", "**/app/**", ...nodeBuiltins],
      "verbs/ is the contract: it depends on nothing.",
    ),
  },
  {
    files: ["sim/**/*.ts"],
    ignores: ["sim/**/*.test.ts"],
    rules: restrict(["**/native/**", "**/app/**"], "The simulator implements the contract and knows nothing above it."),
  },
  {
    files: ["state-machines/**/*.ts"],
    ignores: ["state-machines/**/*.test.ts"],
    rules: restrict(["**/native/**", "**/app/**", ...nodeBuiltins], "Models stay pure."),
  },
  {
    // The session and the bridge run in the renderer too: only the transcript file writer touches the disk.
    files: ["app/session/**/*.ts", "app/bridge/**/*.ts"],
    ignores: ["**/*.test.ts", "**/*.test-util.ts", "app/session/transcript-file.ts"],
    rules: restrict(
      ["**/sim/**", "**/native/**", ...nodeBuiltins],
      "app/session and app/bridge are browser-safe and see backends only through verbs/backend.ts.",
    ),
  },
  {
    // Which backend exists is backends.ts's business alone; the rest sees the contract (verbs/backend.ts).
    files: ["app/backend/**/*.ts"],
    ignores: ["**/*.test.ts", "app/backend/backends.ts"],
    rules: restrict(["**/sim/**", "**/native/**"], "app/backend reaches sim/ and native/ only in backends.ts."),
  },
  {
    files: ["app/renderer/**/*.ts", "app/renderer/**/*.tsx"],
    ignores: ["app/renderer/**/*.test.ts", "app/renderer/**/*.test.tsx", "app/renderer/vite.config.ts"],
    rules: restrict(
      [
        "**/native/**",
        "**/sim/**",
        "**/app/main/**",
        "**/app/server/**",
        "**/app/backend/**",
        "electron",
        ...nodeBuiltins,
      ],
      "The renderer reaches the backend only through app/bridge.",
    ),
  },
);
