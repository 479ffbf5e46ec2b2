/** The error the program ended with, naming the verb, the errno and the attribute at fault. */
import { memo } from "react";
import type { ErrorData } from "../../../bridge/contract.js";

export const ErrorBanner = memo(function ErrorBanner({ error }: { error?: ErrorData }) {
  if (!error) return null;
  if (error.name === "SessionStoppedError") return <div className="notice">Stopped.</div>;
  return (
    <div
      className="error-banner"
      role="alert"
      data-testid="run-error"
      data-code={error.code}
      data-attribute={error.attribute}
    >
      {error.verb ? <code>{error.verb}</code> : <code>{error.name}</code>}
      {error.code && (
        <>
          {" "}
          failed with <code>{error.code}</code>
        </>
      )}
      {error.attribute && (
        <>
          {" "}
          — attribute <code data-testid="error-attribute">{error.attribute}</code>
        </>
      )}
      <div>{error.reason ?? error.message}</div>
    </div>
  );
});
