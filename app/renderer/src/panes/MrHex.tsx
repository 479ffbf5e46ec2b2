/**
 * The first bytes of each MR as hex and ASCII, bytes changed since the last read highlighted;
 * under an MR the current step's goal is about, the bytes the goal asks for, and whether the
 * MR holds them as last read.
 */
import { useStrings } from "../i18n.js";
import { byteHex, hexRows } from "../model/hexdump.js";
import { accessNames, hex } from "../model/format.js";
import type { BytesGoal } from "../model/goal-targets.js";
import type { MrView } from "../model/view.js";

/** The goal's bytes as the MR holds them at its last read: the same, others, or not read that far. */
function seenOf(goal: BytesGoal, bytes: Uint8Array | undefined): "match" | "differ" | "unread" {
  if (!bytes || bytes.length < goal.offset + goal.bytes.length) return "unread";
  return goal.bytes.every((b, i) => bytes[goal.offset + i] === b) ? "match" : "differ";
}

function Goal({ goal, bytes }: { goal: BytesGoal; bytes: Uint8Array | undefined }) {
  const t = useStrings();
  const seen = seenOf(goal, bytes);
  const shownHex = Array.from(goal.bytes.subarray(0, 32), byteHex).join(" ") + (goal.bytes.length > 32 ? " …" : "");
  return (
    <div className={`mr-goal ${seen}`} data-testid="mr-goal" data-seen={seen}>
      {t.mrGoal(goal.offset, goal.utf8 !== undefined ? JSON.stringify(goal.utf8) : `0x${shownHex.replace(/ /g, "")}`)}{" "}
      <span className="mono">{shownHex}</span> — {t.mrGoalSeen(seen)}
    </div>
  );
}

export function MrHex({ mrs, goals = [] }: { mrs: MrView[]; goals?: readonly BytesGoal[] }) {
  const t = useStrings();
  if (mrs.length === 0) return <p className="empty">{t.noMr}</p>;
  return (
    <div>
      {mrs.map((m, index) => {
        const changed = new Set(m.changedBytes ?? []);
        return (
          <div key={m.handle} style={{ marginBottom: 10 }}>
            <div>
              <strong>{m.name}</strong>{" "}
              <span className="mono muted">
                addr {hex(m.addr)} len {m.length} lkey {hex(m.lkey)} rkey {hex(m.rkey)} {accessNames(m.access)}
              </span>
            </div>
            {goals
              .filter((g) => g.mr === index)
              .map((g) => (
                <Goal key={g.offset} goal={g} bytes={m.bytes} />
              ))}
            {m.bytes ? (
              <div className="hex">
                {hexRows(m.bytes, 128).map((r) => (
                  <div key={r.offset}>
                    <span className="off">{r.offset.toString(16).padStart(4, "0")} </span>
                    {r.bytes.map((b, i) => (
                      <span key={i} className={changed.has(r.offset + i) ? "chg" : undefined}>
                        {byteHex(b)}{" "}
                      </span>
                    ))}
                    <span className="off"> {r.ascii}</span>
                  </div>
                ))}
              </div>
            ) : (
              <p className="empty">{t.notRead}</p>
            )}
          </div>
        );
      })}
    </div>
  );
}
