/**
 * Saves the learner's code per step to their profile (lessons.code.save) a moment after they stop
 * typing, one request per key, and at once when the page goes away.
 */
export interface CodeSaver {
  /** The editor's text for `key` changed. */
  change(key: string, code: string): void;
  /** Send what is waiting now (the page is being hidden or unloaded). */
  flush(): void;
}

/** How long after the last keystroke the code is sent. */
export const CODE_SAVE_DELAY_MS = 400;

export function createCodeSaver(save: (key: string, code: string) => void, delayMs = CODE_SAVE_DELAY_MS): CodeSaver {
  const waiting = new Map<string, string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    for (const [key, code] of waiting) save(key, code);
    waiting.clear();
  };
  return {
    change(key, code) {
      waiting.set(key, code);
      clearTimeout(timer);
      timer = setTimeout(flush, delayMs);
    },
    flush,
  };
}
