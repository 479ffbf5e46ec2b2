#!/usr/bin/env node
// The `verbslab` command: runs the TypeScript CLI (app/cli/main.ts) through tsx, and lets
// learner scripts anywhere on disk `import … from "verbslab"` (resolved to the learner entry).
import Module, { register } from "node:module";
import { fileURLToPath } from "node:url";
import { register as registerTsx } from "tsx/esm/api";

const learner = new URL("../session/learner.ts", import.meta.url).href;
const hook = `export async function resolve(specifier, context, next) {
  if (specifier === "verbslab") return { url: ${JSON.stringify(learner)}, shortCircuit: true };
  return next(specifier, context);
}`;
register("data:text/javascript," + encodeURIComponent(hook));
// Scripts outside an ES-module package load as CommonJS: resolve "verbslab" there too.
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolveFilename.call(this, request === "verbslab" ? fileURLToPath(learner) : request, ...rest);
};
registerTsx();

const { cli } = await import("./main.ts");
process.exitCode = await cli(process.argv.slice(2));
// Learner programs may leave readers or timers behind; the command is done.
process.exit();
