/**
 * The page's first script. index.html runs it before the main bundle, which takes a few hundred
 * milliseconds to arrive and evaluate: it opens the bridge and asks for the course right away,
 * so the answers are waiting when React first renders. It starts nothing that listens: the
 * store subscribes to events before it asks for the session's state (lab/store.ts).
 */
import { getBridge } from "../../bridge/index.js";
import { arrivedSoFar, startCourse } from "./lab/course.js";

export const bridge = getBridge();
export const course = startCourse(bridge);
/** The course if it is in by the time React first renders (usually: see lab/course.ts). */
export const courseArrived = arrivedSoFar(course);

/**
 * How long the main bundle may wait for the course before it runs anyway (a slow or absent host).
 * The main bundle imports this module, so this module's top-level await holds its evaluation: a
 * few hundred ms of main thread in which the page reads no message. Started before the socket had
 * opened (its `open` event waits for the main thread too), that evaluation held back all three of
 * the course's requests, and the lesson arrived after the window had rendered without it.
 */
const COURSE_WAIT_MS = 300;
await Promise.race([course.catch(() => {}), new Promise((r) => setTimeout(r, COURSE_WAIT_MS))]);
