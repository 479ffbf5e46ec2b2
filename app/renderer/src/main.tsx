/** Entry: connect to the host through the bridge, then render. */
import { createRoot } from "react-dom/client";
import { getBridge } from "../../bridge/index.js";
import { App } from "./App.js";
import { startCourse } from "./lab/course.js";
import { LabStore } from "./lab/store.js";
import "./styles.css";

const store = new LabStore(getBridge());
// Before the first render: see lab/course.ts.
const course = startCourse(store.bridge);
const root = createRoot(document.getElementById("root")!);
root.render(<App store={store} course={course} />);
store.start().catch((err: Error) => store.notice("error", `Could not reach the VerbsLab host: ${err.message}`));
// The editor is lazy (App's Suspense) but nothing is usable without it: begin evaluating its
// chunk (preloaded by index.html) now, while the first bridge round trips are in flight.
void import("./panes/EditorPane.js");
