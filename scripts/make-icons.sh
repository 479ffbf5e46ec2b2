#!/usr/bin/env bash
# Renders assets/icon.svg into the PNG sizes the Electron window and electron-builder's Linux
# targets (AppImage, deb: hicolor NxN) use, into assets/icons/NxN.png. Needs rsvg-convert
# (Debian: librsvg2-bin). Run it after changing the SVG and commit the PNGs.
set -euo pipefail
cd "$(dirname "$0")/.."
for n in 16 32 48 64 128 256 512; do
  rsvg-convert -w "$n" -h "$n" assets/icon.svg -o "assets/icons/${n}x${n}.png"
done
