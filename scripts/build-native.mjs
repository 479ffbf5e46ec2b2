#!/usr/bin/env node
// Builds the native backend (native/) with cmake-js when libibverbs' headers are present.
// Without them it explains what to install and exits 0, so `npm install` still succeeds
// and the app falls back to the simulator. Run by `npm install` and `npm run build:native`.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const headerDirs = ["/usr/include", "/usr/local/include"];
const header = headerDirs.map((d) => join(d, "infiniband", "verbs.h")).find((p) => existsSync(p));

if (process.env.VERBSLAB_SKIP_NATIVE) {
  console.log("build-native: VERBSLAB_SKIP_NATIVE is set; not building the native backend.");
  process.exit(0);
}
if (!header) {
  console.log(
    [
      "build-native: <infiniband/verbs.h> was not found, so the native backend (real RDMA verbs) is not built.",
      "  VerbsLab will use its simulator. To drive real queue pairs, install rdma-core's headers and rebuild:",
      "    sudo apt-get install -y libibverbs-dev cmake g++   # Debian/Ubuntu",
      "    npm run build:native",
    ].join("\n"),
  );
  process.exit(0);
}

// librdmacm is optional (CMakeLists.txt builds the rdma_cm classes only with it): say so.
if (!headerDirs.some((d) => existsSync(join(d, "rdma", "rdma_cma.h")))) {
  console.log(
    "build-native: <rdma/rdma_cma.h> was not found: building without rdma_cm (backend.cm is absent).\n" +
      "  For connection management through librdmacm: sudo apt-get install -y librdmacm-dev && npm run build:native",
  );
}

const require = createRequire(import.meta.url);
let BuildSystem;
try {
  ({ BuildSystem } = require("cmake-js"));
} catch {
  console.log("build-native: cmake-js is not installed (a dev dependency); not building the native backend.");
  process.exit(0);
}

// cmake-js decides "Node-API only" from the project directory's package.json; ours lives
// at the root (binary.napi_versions), so say it here: node-api-headers, nothing downloaded.
const build = new BuildSystem({ directory: join(root, "native"), out: join(root, "native", "build") });
build.options.isNodeApi = true;
try {
  await build.build();
  console.log(`build-native: built ${join("native", "build", "Release", "verbslab_native.node")}`);
} catch (err) {
  console.error(`build-native: the native backend failed to build: ${err instanceof Error ? err.message : err}`);
  console.error("  The simulator still works. Check that cmake and a C++17 compiler are installed.");
  // A broken build must be visible in CI but must not stop a learner's `npm install`.
  process.exit(process.env.CI ? 1 : 0);
}
