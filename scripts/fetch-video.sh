#!/usr/bin/env bash
# Fetches the real video of benches/hdf5.py into data/ (git-ignored): data/vtest.avi, OpenCV's
# sample video (a street filmed by a fixed camera, 768 x 576 pixels, 795 frames, MPEG-4 part 2
# in AVI), as Debian's package opencv-doc ships it. Pinned version, checked by SHA-256 (the
# package and the file). The bench decodes it with PyAV (benches/requirements.txt). Does
# nothing when the file is there with the expected hash.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/data/vtest.avi"
deb_package=opencv-doc
deb_version=4.6.0+dfsg-12
deb_sha256=4b12681df35878207ac7097dc66184b2ae552e4bf4ddd2af04a0f03ed0b8682a
member=./usr/share/doc/opencv-doc/examples/data/vtest.avi
video_sha256=45cddc9490be69345cbdab64ca583be65987e864ca408038e648db99e10516cf

if echo "$video_sha256  $out" | sha256sum --check --status 2>/dev/null; then
  echo "fetch-video: $out is up to date"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0777 "$tmp" # apt's download user writes here
deb="$tmp/${deb_package}_${deb_version}_all.deb"
if ! (cd "$tmp" && apt-get download -qq "$deb_package=$deb_version" 2>/dev/null); then
  [ "$(id -u)" -eq 0 ] || { echo "fetch-video: $deb_package $deb_version not in apt's lists; run apt-get update as root" >&2; exit 1; }
  apt-get update -qq
  (cd "$tmp" && apt-get download -qq "$deb_package=$deb_version")
fi
echo "$deb_sha256  $deb" | sha256sum --check --quiet || { echo "fetch-video: $deb has the wrong SHA-256" >&2; exit 1; }
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "$member"
echo "$video_sha256  $tmp/$member" | sha256sum --check --quiet || { echo "fetch-video: vtest.avi has the wrong SHA-256" >&2; exit 1; }
mkdir -p "$root/data"
mv "$tmp/$member" "$out"
echo "fetch-video: $out ready"
