/** The first bytes of each MR as hex and ASCII, bytes changed since the last read highlighted. */
import { useStrings } from "../i18n.js";
import { byteHex, hexRows } from "../model/hexdump.js";
import { accessNames, hex } from "../model/format.js";
import type { MrView } from "../model/view.js";

export function MrHex({ mrs }: { mrs: MrView[] }) {
  const t = useStrings();
  if (mrs.length === 0) return <p className="empty">{t.noMr}</p>;
  return (
    <div>
      {mrs.map((m) => {
        const changed = new Set(m.changedBytes ?? []);
        return (
          <div key={m.handle} style={{ marginBottom: 10 }}>
            <div>
              <strong>{m.name}</strong>{" "}
              <span className="mono muted">
                addr {hex(m.addr)} len {m.length} lkey {hex(m.lkey)} rkey {hex(m.rkey)} {accessNames(m.access)}
              </span>
            </div>
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
