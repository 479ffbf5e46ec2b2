/**
 * The error the program ended with, naming the verb, the errno and the attribute at fault. The
 * reason is the error's data (verbs/verb-failure.ts) worded in the learner's language (i18n.ts
 * `verbWhy`); an error recorded before errors carried it uses the failed call's rebuilt data, else
 * the backend's words.
 */
import { useStrings } from "../i18n.js";
import { memo } from "react";
import type { ErrorData } from "../../../bridge/contract.js";
import type { TranscriptRow } from "../model/view.js";

export const ErrorBanner = memo(function ErrorBanner({ error, failed }: { error?: ErrorData; failed?: TranscriptRow }) {
  const t = useStrings();
  if (!error) return null;
  // `failed`: the transcript's last call, when it failed; its data explains `error` if the error is its.
  const own = failed?.why && error.verb === failed.verb && error.code === failed.outcome;
  const why = error.why ?? (own ? failed.why : undefined);
  const reason = (why && t.verbWhy(why)) || error.reason;
  if (error.name === "SessionStoppedError") return <div className="notice">{t.stopped}</div>;
  return (
    <div
      className="error-banner"
      role="alert"
      data-testid="run-error"
      data-code={error.code}
      data-attribute={error.attribute}
    >
      {error.verb ? <code>{error.verb}</code> : <code>{error.name}</code>}
      {/* An argument error of a verb (a TypeError with why): the verb, then the error's class. */}
      {error.verb && !error.code && (
        <>
          {" "}
          <code>{error.name}</code>
        </>
      )}
      {error.code && (
        <>
          {" "}
          {t.failedWith} <code>{error.code}</code>
        </>
      )}
      {error.attribute && (
        <>
          {" "}
          — {t.attribute} <code data-testid="error-attribute">{error.attribute}</code>
        </>
      )}
      <div data-testid="error-reason">{reason ?? error.message}</div>
      {/* A reason from data does not say where: its line does (the message of other errors has it). */}
      {(error.reason || why) && error.line !== undefined && (
        <div data-testid="error-line">
          {t.atLine(error.line, error.column ?? 0)}
          {error.unawaited && t.notAwaited}
        </div>
      )}
    </div>
  );
});
