/**
 * Stands in for Monaco's diff editor widgets (vite.config.ts aliases `diffEditorWidget.js` and
 * `multiDiffEditorWidget.js` here). The standalone API imports them for `createDiffEditor` and
 * `createMultiFileDiffEditor`, which VerbsLab never calls: ~170 kB less for every cold load to
 * parse and evaluate. Calling either throws.
 */
const absent = (what: string) => new Error(`${what}: VerbsLab's Monaco build has no diff editor`);

export class DiffEditorWidget {
  constructor() {
    throw absent("createDiffEditor");
  }
}

export class MultiDiffEditorWidget {
  constructor() {
    throw absent("createMultiFileDiffEditor");
  }
}

export function toLineChanges(): never {
  throw absent("toLineChanges");
}
