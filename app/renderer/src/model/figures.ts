/**
 * The figures lessons show: assets/figures/<name>.svg, bundled by Vite (one home for the
 * files; lesson Markdown names them as `![alt](figure:<name>)`, and lessons:check refuses a
 * name with no file). A name not in the folder shows nothing.
 */
const urls = import.meta.glob("../../../../assets/figures/*.svg", {
  eager: true,
  query: "?url",
  import: "default",
}) as Record<string, string>;

const byName = new Map(
  Object.entries(urls).map(([path, url]) => [path.slice(path.lastIndexOf("/") + 1, -".svg".length), url]),
);

/** The bundled URL of figure `name` (e.g. "kernel-bypass", "kernel-bypass.zh"), if there is one. */
export function figureUrl(name: string): string | undefined {
  return byName.get(name);
}
