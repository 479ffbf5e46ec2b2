/** Progress for anything that takes more than a second: determinate when the total is known. */
export function Progress({ label, fraction }: { label: string; fraction?: number }) {
  return (
    <div
      className="progress-wrap"
      role="progressbar"
      aria-label={label}
      aria-valuenow={fraction !== undefined ? Math.round(fraction * 100) : undefined}
    >
      <div className="muted" style={{ fontSize: 11, marginBottom: 3 }}>
        {label}
      </div>
      <div className={`progress${fraction === undefined ? " indeterminate" : ""}`}>
        <div style={fraction !== undefined ? { width: `${Math.round(fraction * 100)}%` } : undefined} />
      </div>
    </div>
  );
}
