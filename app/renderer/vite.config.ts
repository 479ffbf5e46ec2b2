// Vite builds the renderer into dist/renderer: the same files are served by the web-mode
// server and loaded by Electron, so paths are relative and nothing comes from a CDN.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants } from "node:zlib";
import { defineConfig, type Plugin } from "vite";
import react from "@vitejs/plugin-react";

const root = fileURLToPath(new URL(".", import.meta.url));
const BOOT = join(root, "src/boot.ts");

/**
 * The editor pane is a lazy chunk (Monaco is ~3 MB), but the window is not usable until it
 * is there: index.html names its JavaScript as modulepreloads (and its CSS as preloads), so the
 * browser fetches and compiles it alongside the main bundle instead of after React's first render
 * asked for it.
 */
function preloadEditor(): Plugin {
  return {
    name: "verbslab:preload-editor",
    apply: "build",
    transformIndexHtml: {
      order: "post",
      handler(_html, ctx) {
        const chunks = Object.values(ctx.bundle ?? {});
        const editor = chunks.find(
          (c) => c.type === "chunk" && c.isDynamicEntry && c.facadeModuleId?.endsWith("/panes/EditorPane.tsx"),
        );
        if (!editor || editor.type !== "chunk") return [];
        const entries = new Set(chunks.filter((c) => c.type === "chunk" && c.isEntry).map((c) => c.fileName));
        const statics = [...editor.imports.filter((f) => !entries.has(f)), editor.fileName];
        // What Monaco imports the moment the editor's TypeScript model exists (the tokenizer, the
        // language features): fetched now, they are ready then instead of two more requests.
        const dynamics = statics.flatMap((f) => {
          const c = ctx.bundle?.[f];
          return c?.type === "chunk" ? c.dynamicImports : [];
        });
        const files = [...new Set([...statics, ...dynamics])].filter((f) => !entries.has(f));
        // Their style sheets too: the import waits for them, and it is made only once the main
        // bundle has run.
        const css = files.flatMap((f) => {
          const c = ctx.bundle?.[f];
          return c?.type === "chunk" ? [...(c.viteMetadata?.importedCss ?? [])] : [];
        });
        // Low priority: the boot script and the main bundle come first. The page cannot open the
        // bridge before boot.ts runs, nor show the lesson before the main bundle; the editor's
        // 3 MB, fetched at the same priority, slowed both (six connections per host, one server).
        const fetchpriority = "low";
        return [
          ...css.map((f) => ({
            tag: "link",
            attrs: { rel: "preload", as: "style", crossorigin: true, fetchpriority, href: `./${f}` },
            injectTo: "head" as const,
          })),
          ...files.map((f) => ({
            tag: "link",
            attrs: { rel: "modulepreload", crossorigin: true, fetchpriority, href: `./${f}` },
            injectTo: "head" as const,
          })),
        ];
      },
    },
  };
}

/**
 * src/boot.ts is an entry of its own, run by the page's first script tag: it opens the bridge and
 * asks for the course while the main bundle is still arriving (the main bundle imports the same
 * chunk, so there is one bridge). Vite would fold a second script of index.html into its bundle.
 */
function bootFirst(): Plugin {
  return {
    name: "verbslab:boot-first",
    apply: "build",
    config: () => ({ build: { rollupOptions: { input: { index: join(root, "index.html"), boot: BOOT } } } }),
    transformIndexHtml: {
      order: "post",
      handler(_html, ctx) {
        const boot = Object.values(ctx.bundle ?? {}).find((c) => c.type === "chunk" && c.facadeModuleId === BOOT);
        if (!boot) throw new Error("verbslab:boot-first: no chunk for src/boot.ts");
        return [
          {
            tag: "script",
            attrs: { type: "module", crossorigin: true, src: `./${boot.fileName}` },
            injectTo: "head-prepend" as const,
          },
        ];
      },
    },
  };
}

/**
 * A brotli copy (`.br`) of every script, style sheet and font, which the web server sends to
 * browsers that take it (the TypeScript worker: 6.9 MB → 1.2 MB for a lab server's learners).
 * Quality 5: about a second for the whole build; 11 would take a minute for a few % more.
 */
function precompress(): Plugin {
  return {
    name: "verbslab:precompress",
    apply: "build",
    async writeBundle(options, bundle) {
      for (const name of Object.keys(bundle)) {
        if (!/\.(js|css|ttf|svg|json)$/.test(name) || !options.dir) continue;
        const path = join(options.dir, name);
        const bytes = await readFile(path);
        if (bytes.length < 1024) continue;
        const params = { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length };
        await writeFile(path + ".br", brotliCompressSync(bytes, { params }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: "./",
  plugins: [react(), bootFirst(), preloadEditor(), precompress()],
  resolve: {
    alias: [
      // Monaco's worker helper imports every editor contribution; ours is the same function without them.
      { find: /^(\.\.\/)+internal\/common\/workers\.js$/, replacement: join(root, "src/monaco/workers.ts") },
      // The diff editors (the app shows none).
      {
        find: /^.*\/widget\/(diffEditor\/diffEditorWidget|multiDiffEditor\/multiDiffEditorWidget)\.js$/,
        replacement: join(root, "src/monaco/no-diff-editor.ts"),
      },
    ],
  },
  worker: { format: "es" },
  build: {
    outDir: fileURLToPath(new URL("../../dist/renderer", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 8000,
    reportCompressedSize: false,
  },
});
