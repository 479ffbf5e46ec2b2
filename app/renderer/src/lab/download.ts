/** Saves text (or bytes: a pcap) as a file the way a browser (and Electron) does: a Blob behind a temporary link. */
export function download(filename: string, mime: string, content: string | Uint8Array<ArrayBuffer>) {
  const url = URL.createObjectURL(new Blob([content], { type: mime }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
