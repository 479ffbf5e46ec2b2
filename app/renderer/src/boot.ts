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
