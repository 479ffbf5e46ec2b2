/** A drag handle between two columns (mouse, touch or the arrow keys). */
import { memo, useRef } from "react";
import type { PaneSizes } from "../lab/pane-sizes.js";

export interface ResizeHandleProps {
  /** The column this handle widens: the lesson grows as it moves right, the inspector as it moves left. */
  pane: keyof PaneSizes;
  sizes: PaneSizes;
  onResize: (pane: keyof PaneSizes, from: PaneSizes, dx: number, done: boolean) => void;
}

const KEY_STEP = 24;

export const ResizeHandle = memo(function ResizeHandle({ pane, sizes, onResize }: ResizeHandleProps) {
  const drag = useRef<{ x: number; from: PaneSizes } | null>(null);
  const sign = pane === "lesson" ? 1 : -1;
  return (
    <div
      className="resize-handle"
      role="separator"
      aria-orientation="vertical"
      aria-label={`resize the ${pane} pane`}
      aria-valuenow={sizes[pane]}
      tabIndex={0}
      data-testid={`resize-${pane}`}
      onPointerDown={(e) => {
        e.currentTarget.setPointerCapture(e.pointerId);
        drag.current = { x: e.clientX, from: sizes };
      }}
      onPointerMove={(e) => {
        if (drag.current) onResize(pane, drag.current.from, sign * (e.clientX - drag.current.x), false);
      }}
      onPointerUp={(e) => {
        if (drag.current) onResize(pane, drag.current.from, sign * (e.clientX - drag.current.x), true);
        drag.current = null;
      }}
      onPointerCancel={() => (drag.current = null)}
      onKeyDown={(e) => {
        const dx = e.key === "ArrowRight" ? KEY_STEP : e.key === "ArrowLeft" ? -KEY_STEP : 0;
        if (!dx) return;
        e.preventDefault();
        onResize(pane, sizes, sign * dx, true);
      }}
    />
  );
});
