/** Renders lesson Markdown (see model/markdown.ts) as React elements. */
import { parseMarkdown, type Inline } from "../model/markdown.js";

function Inl({ parts }: { parts: Inline[] }) {
  return (
    <>
      {parts.map((p, i) =>
        p.t === "code" ? (
          <code key={i}>{p.s}</code>
        ) : p.t === "b" ? (
          <strong key={i}>{p.inl ? <Inl parts={p.inl} /> : p.s}</strong>
        ) : p.t === "i" ? (
          <em key={i}>{p.inl ? <Inl parts={p.inl} /> : p.s}</em>
        ) : p.t === "a" ? (
          <a key={i} href={p.href} target="_blank" rel="noreferrer">
            {p.s}
          </a>
        ) : (
          <span key={i}>{p.s}</span>
        ),
      )}
    </>
  );
}

export function Markdown({ text }: { text: string }) {
  return (
    <div className="prose">
      {parseMarkdown(text).map((b, i) => {
        switch (b.t) {
          case "h":
            return b.level <= 2 ? (
              <h3 key={i}>
                <Inl parts={b.inl} />
              </h3>
            ) : (
              <h4 key={i}>
                <Inl parts={b.inl} />
              </h4>
            );
          case "p":
            return (
              <p key={i}>
                <Inl parts={b.inl} />
              </p>
            );
          case "quote":
            return (
              <blockquote key={i}>
                <Inl parts={b.inl} />
              </blockquote>
            );
          case "table":
            return (
              <table key={i} className="grid md-table">
                <thead>
                  <tr>
                    {b.head.map((c, j) => (
                      <th key={j}>
                        <Inl parts={c} />
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {b.rows.map((r, j) => (
                    <tr key={j}>
                      {r.map((c, k) => (
                        <td key={k}>
                          <Inl parts={c} />
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            );
          case "pre":
            return (
              <pre key={i}>
                <code>{b.code}</code>
              </pre>
            );
          default: {
            const items = b.items.map((it, j) => (
              <li key={j}>
                <Inl parts={it} />
              </li>
            ));
            return b.t === "ol" ? <ol key={i}>{items}</ol> : <ul key={i}>{items}</ul>;
          }
        }
      })}
    </div>
  );
}
