#!/bin/bash
# Builds one GStreamer release into a prefix: core (with the gst-check
# library, the tools and libgstcoretracers, for the leaks tracer), base (app,
# rawparse, typefind, videoconvertscale, videotestsrc), of good only the MP4
# demuxer (isomp4, for the decode pipelines of bench/multistream_bench), and
# of bad only the CUDA library
# (from 1.22; 1.20 has none, and the plugin is then built without it),
# nvcodec and the video parsers. The plugin is then built and tested against it with
# scripts/gst-version-matrix.sh.
#
#   scripts/build-gstreamer.sh VERSION PREFIX      e.g. 1.24.13 $HOME/gst/1.24
#
# Source: GST_SOURCE, a git clone of the GStreamer monorepo that holds the
# tag VERSION; without it, the tag is cloned from GST_GIT (default
# https://gitlab.freedesktop.org/gstreamer/gstreamer.git).
# Meson: GStreamer 1.24 needs Meson 1.1 and 1.26 on need 1.4, newer than
# Debian 12's 1.0. MESON (a command, e.g. "python3 /src/meson/meson.py") is
# used if set, else `meson` on PATH if new enough, else Meson from PyPI in a
# virtual environment under PREFIX.
set -euo pipefail

if [ $# -ne 2 ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
version=$1
prefix=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)

# The plugin's build tools, and flex, bison and glib's headers for GStreamer's.
"$here/install-deps.sh" --gstreamer-source

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== GStreamer $version source"
if [ -n "${GST_SOURCE:-}" ]; then
  # Without the documentation's plugin caches and the ChangeLogs, which are
  # not built from (and are the largest files, which a partial clone may
  # lack).
  git -C "$GST_SOURCE" archive "$version" -- subprojects/gstreamer subprojects/gst-plugins-base \
    subprojects/gst-plugins-good subprojects/gst-plugins-bad ':(exclude,glob)subprojects/*/docs/**/*.json' \
    ':(exclude,glob)subprojects/*/ChangeLog' | tar -x -C "$work"
else
  git clone -q --depth 1 --branch "$version" \
    "${GST_GIT:-https://gitlab.freedesktop.org/gstreamer/gstreamer.git}" "$work/clone"
  mv "$work/clone/subprojects" "$work/"
fi

# The Meson this release asks for.
need=$(grep -m1 -oE "meson_version *: *'>= *[0-9.]+'" "$work/subprojects/gstreamer/meson.build" |
  grep -oE '[0-9]+(\.[0-9]+)+')
new_enough() {
  [ "$(printf '%s\n%s\n' "$need" "$1" | sort -V | head -1)" = "$need" ]
}
if [ -n "${MESON:-}" ]; then
  read -r -a meson <<<"$MESON"
elif command -v meson >/dev/null 2>&1 && new_enough "$(meson --version)"; then
  meson=(meson)
else
  echo "== Meson $need or newer, from PyPI, in $prefix/meson-venv"
  python3 -m venv "$prefix/meson-venv"
  "$prefix/meson-venv/bin/pip" install -q "meson>=$need"
  meson=("$prefix/meson-venv/bin/meson")
fi
have=$("${meson[@]}" --version)
if ! new_enough "$have"; then
  echo "error: GStreamer $version needs Meson $need or newer; ${meson[*]} is $have" >&2
  exit 1
fi
echo "== Meson $have"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Every feature off unless named: no documentation, introspection,
# translations, tests or examples of GStreamer's own.
common=(--prefix "$prefix" --libdir lib --buildtype release --wrap-mode nodownload
  -Dauto_features=disabled)

build() {
  local name=$1
  shift
  echo "== $name"
  "${meson[@]}" setup "$work/build-$name" "$work/subprojects/$name" "${common[@]}" "$@" >/dev/null
  ninja -C "$work/build-$name" >/dev/null
  "${meson[@]}" install -C "$work/build-$name" >/dev/null
}

build gstreamer -Dtools=enabled -Dcheck=enabled -Dcoretracers=enabled
# videoconvert and videoscale became one plugin in 1.22.
if new_enough_version() { [ "$(printf '%s\n%s\n' "$1" "$version" | sort -V | head -1)" = "$1" ]; }; \
    new_enough_version 1.22; then
  convert=(-Dvideoconvertscale=enabled)
else
  convert=(-Dvideoconvert=enabled -Dvideoscale=enabled)
fi
build gst-plugins-base -Dtools=enabled -Dapp=enabled -Drawparse=enabled -Dtypefind=enabled \
  "${convert[@]}" -Dvideotestsrc=enabled
# good has no tools option.
build gst-plugins-good -Disomp4=enabled
# Before 1.22 bad has no public CUDA library, and the plugin builds without
# it (system memory only): bad is left out.
if new_enough_version 1.22; then
  build gst-plugins-bad -Dtools=enabled -Dnvcodec=enabled -Dvideoparsers=enabled
fi

echo "== GStreamer $version in $prefix:"
PATH="$prefix/bin:$PATH" GST_PLUGIN_SYSTEM_PATH_1_0="$prefix/lib/gstreamer-1.0" \
  GST_PLUGIN_SCANNER_1_0="$prefix/libexec/gstreamer-1.0/gst-plugin-scanner" \
  GST_REGISTRY_1_0="$work/registry.bin" gst-inspect-1.0 --version | sed -n 1p
ls "$prefix/lib/pkgconfig" | grep -E '^gstreamer-(1.0|check|cuda|video)' | tr '\n' ' '
echo
echo "next: $here/gst-version-matrix.sh $prefix"
