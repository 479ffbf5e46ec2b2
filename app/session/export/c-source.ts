/**
 * The pieces of C source every part of the C export writes with: literals and comments that
 * no transcript text can escape, numbers and symbols as C expressions, object names, and the
 * line writer. A transcript file is untrusted: nothing in it may become code.
 */
import { flagNames, nameOf } from "../../../verbs/constants.js";
import { isSym, objectName, type ObjectInfo, type Sym } from "../symbols.js";
import type { WireBytes, WireValue } from "../wire.js";

export type Obj = { [key: string]: WireValue | Sym };

/**
 * A C string literal holding `s`, whatever it holds: quotes, backslashes and `?` (no trigraph
 * can form) are escaped, every other byte outside printable ASCII is an octal escape. `%` is
 * left as it is: a literal only ever goes to printf as an argument, never as the format.
 */
export const cstr = (s: string) =>
  '"' +
  String(s)
    .replace(/[\\"?]/g, (c) => "\\" + c)
    .replace(/[\x00-\x1f\x7f-\uffff]/g, (c) => {
      const b = new TextEncoder().encode(c);
      return [...b].map((x) => "\\" + x.toString(8).padStart(3, "0")).join("");
    }) +
  '"';

/**
 * Text for inside a C comment, on one line. Every `*` is followed by a space, so nothing in
 * `s`, nor `s` followed by what the template puts after it, can end the comment (or open a
 * nested one); control characters become spaces and `??` cannot form a trigraph.
 */
export const comment = (s: unknown) =>
  String(s)
    .replace(/[\x00-\x1f\x7f]/g, " ")
    .replace(/\*/g, "* ")
    .replace(/\/\*/g, "/ *")
    .replace(/\?\?/g, "? ?");

/** A C identifier (a struct field named by the transcript), or undefined for anything else. */
export const ident = (s: string) => (/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(s) ? s : undefined);

/** The objects of a recorded list (anything else in it, or a list that is not one, reads as empty). */
export const objs = (v: unknown): Obj[] =>
  Array.isArray(v) ? v.map((o) => (o && typeof o === "object" && !Array.isArray(o) ? (o as Obj) : {})) : [];

/** A safe integer as C source, or `dflt` for anything else (a transcript file is untrusted). */
export const intExpr = (v: unknown, dflt = 0) => String(typeof v === "number" && Number.isSafeInteger(v) ? v : dflt);

/** The C variable of an object; a handle that is not a plain number cannot name one. */
export function cName(ref: { $handle: unknown; type: unknown }): string {
  const name = objectName(ref as Parameters<typeof objectName>[0]);
  if (!/^[a-z]+\d+$/.test(name))
    throw new TypeError(`the transcript names an object ${comment(name)} that is not a handle`);
  return name;
}

/** Recorded bytes as hex, or "" when the text is not hex (a hand-edited file). */
export const hexOf = (v: unknown): string => {
  const h = v && typeof v === "object" && "$bytes" in v ? (v as WireBytes).$bytes : "";
  return typeof h === "string" && /^(?:[0-9a-fA-F]{2})*$/.test(h) ? h : "";
};

export function flagExpr(group: Readonly<Record<string, number>>, v: number): string {
  if (v === 0) return "0";
  return flagNames(group, v).join(" | ");
}

export function enumExpr(group: Readonly<Record<string, number>>, v: number): string {
  const n = nameOf(group, v);
  // A name from the group is a C enumerator; anything else is written as the number.
  return /^(IBV_|RDMA_)/.test(n) ? n : intExpr(v);
}

/** A number or symbol as a C expression. */
export function numExpr(v: WireValue | Sym | undefined, objects: Map<number, ObjectInfo>): string {
  if (v === undefined || v === null) return "0";
  if (isSym(v)) {
    const o = objects.get(v.handle)!;
    switch (v.$sym) {
      case "qp_num":
        return `${o.name}->qp_num`;
      case "lkey":
        return `${o.name}->lkey`;
      case "rkey":
        return `${o.name}->rkey`;
      case "addr":
        return `(uintptr_t)buf_${o.name}${v.offset ? ` + ${intExpr(v.offset)}` : ""}`;
      case "gid":
        return `/* gid */ 0`;
    }
  }
  if (typeof v === "number") {
    if (!Number.isFinite(v)) return "0";
    return Number.isInteger(v) && v > 0xffff ? `0x${v.toString(16)}` : String(v);
  }
  if (typeof v === "boolean") return v ? "1" : "0";
  if (typeof v === "object" && "$bigint" in v) {
    const b = (v as { $bigint: unknown }).$bigint;
    return typeof b === "string" && /^-?\d{1,20}$/.test(b) ? `UINT64_C(${b})` : "0";
  }
  return "0";
}

export class Writer {
  lines: string[] = [];
  private n = 0;
  line(s = ""): void {
    this.lines.push(s === "" ? "" : "    " + s);
  }
  tmp(prefix: string): string {
    return `${prefix}${++this.n}`;
  }
}

/** Hex text as a C initializer list ("0x68, 0x65"). */
export function bytesList(hexs: string): string {
  const out: string[] = [];
  for (let i = 0; i < hexs.length; i += 2) out.push("0x" + hexs.slice(i, i + 2));
  return out.join(", ");
}

/**
 * Stops the program where an object the transcript created could not be made here: the
 * transcript's later steps use it.
 */
export function stopUnlessCreated(w: Writer, step: string, name: string): void {
  w.line(`if (!${name}) {`);
  w.line(`    printf("%s: failed: %s (the transcript succeeded here; stopping)\\n", ${step}, strerror(errno));`);
  w.line(`    return 1;`);
  w.line(`}`);
}
