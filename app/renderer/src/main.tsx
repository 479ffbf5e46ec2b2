/** Entry: the bridge and the course are already on their way (boot.ts); render. */
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import { bridge, course, courseArrived } from "./boot.js";
import { LabStore } from "./lab/store.js";
import "./styles.css";

const store = new LabStore(bridge);
const root = createRoot(document.getElementById("root")!);
root.render(<App store={store} course={course} arrived={courseArrived()} />);
store.start().catch((err: Error) => store.notice("error", (t) => t.hostUnreachable(err.message)));
