/** A row of tabs over one panel body; only the selected pane renders. */
import { useState, type ReactNode } from "react";

export interface Tab {
  id: string;
  label: ReactNode;
  render: () => ReactNode;
}

export function Tabs({ tabs, initial, className }: { tabs: Tab[]; initial?: string; className?: string }) {
  const [sel, setSel] = useState(initial ?? tabs[0]?.id);
  const cur = tabs.find((t) => t.id === sel) ?? tabs[0];
  return (
    <div className={`panel ${className ?? ""}`}>
      <div className="tabs" role="tablist">
        {tabs.map((t) => (
          <button key={t.id} role="tab" aria-selected={t.id === cur?.id} data-tab={t.id} onClick={() => setSel(t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <div className="panel-body grow" role="tabpanel">
        {cur?.render()}
      </div>
    </div>
  );
}
