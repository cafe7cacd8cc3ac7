#!/bin/bash
# Packs a GStreamer prefix made by scripts/build-gstreamer.sh into DIR for
# the GPU host, as ../shared/gpu-host/make-bundle packs Debian's 1.22: the
# prefix's libraries, plugins, plugin scanner and tools, and every system
# library they and the ELF files named load (glibc and libstdc++ excepted:
# the host's own are newer). On the GPU host, from the checkout root:
#
#   source DIR/env.sh         (then as with the 1.22 bundle; a build of the
#                              plugin against the prefix, e.g. build-gst-1.28)
#
#   scripts/make-prefix-bundle.sh PREFIX DIR [ELF ...]
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
prefix=$(realpath -m -- "$1")
out=$(realpath -m -- "$2")
shift 2
for d in lib libexec bin; do
  if [ ! -d "$prefix/$d" ]; then
    echo "make-prefix-bundle.sh: $prefix has no $d/: not a prefix of scripts/build-gstreamer.sh" >&2
    exit 1
  fi
done
case "$out/" in "$prefix/"*)
  echo "make-prefix-bundle.sh: $out lies in the prefix $prefix" >&2; exit 1;; esac
case "$prefix/" in "$out/"*)
  echo "make-prefix-bundle.sh: the prefix $prefix lies in $out" >&2; exit 1;; esac
# Only an earlier bundle (its env.sh and syslib/) is replaced.
if [ -e "$out" ] && { [ ! -d "$out" ] ||
    { [ -n "$(ls -A -- "$out")" ] && { [ ! -f "$out/env.sh" ] || [ ! -d "$out/syslib" ]; }; }; }; then
  echo "make-prefix-bundle.sh: refusing to replace $out: it is not an earlier bundle" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/syslib"
cp -a "$prefix/lib" "$prefix/libexec" "$prefix/bin" "$out/"
rm -rf "$out/lib/pkgconfig" "$out/lib/gstreamer-1.0/include" "$out/lib"/*.a
elfs=$(find "$out/lib" "$out/libexec" "$out/bin" -type f \( -name '*.so*' -o -perm -u+x \))
for f in $elfs "$@"; do
  LD_LIBRARY_PATH="$prefix/lib" ldd "$f" 2>/dev/null | awk '/=> \// {print $3}' || true
done | sort -u | grep -v "^$prefix/" |
  grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so' |
  while read -r l; do cp -L "$l" "$out/syslib/"; done
cat > "$out/env.sh" <<EOF2
# source this on the GPU host, from the checkout root
B=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="\$B/lib:\$B/syslib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export GST_PLUGIN_SYSTEM_PATH_1_0="\$B/lib/gstreamer-1.0"
export GST_PLUGIN_SCANNER_1_0="\$B/libexec/gstreamer-1.0/gst-plugin-scanner"
export GST_REGISTRY_1_0="/tmp/gst-registry-prefix-\$\$.bin"
export PATH="\$B/bin:\$PATH"
# Build directories hold absolute paths: make the path they were made at point here.
ORIG="$(pwd)"
if [ "\$ORIG" != "\$(pwd)" ] && [ ! -e "\$ORIG" ]; then mkdir -p "\$(dirname "\$ORIG")" && ln -s "\$(pwd)" "\$ORIG"; fi
EOF2
echo "bundle: $(du -sh "$out" | cut -f1) in $out"
