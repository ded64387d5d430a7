#!/usr/bin/env bash
# Bundles the Debian packages stoker needs to build, for a machine without package access
# (e.g. an offline GPU node with a pip-installed PyTorch). Run it on a connected Debian 12
# machine; root is not needed (apt-get download and dpkg-deb -x work as any user).
#
#   scripts/bundle_offline.sh [--out DIR] [--arch ARCH] [--no-tests] [--no-tools] [--with-data]
#
#   --out DIR     output directory (default: stoker-deps); the tarball is DIR.tar.gz next to it
#   --arch ARCH   Debian architecture of the node (default: this machine's, e.g. amd64); a
#                 foreign one must already be enabled here (dpkg --add-architecture + apt update)
#   --no-tests    leave out GoogleTest (then configure with -DSTOKER_BUILD_TESTS=OFF)
#   --no-tools    leave out cmake, ninja and pkg-config (the node brings its own)
#   --with-data   also bundle dataset-fashion-mnist (30 MB; the trainer's default job)
#
# Result:
#   DIR/debs/     the downloaded .deb files (kept here, not in the tarball)
#   DIR/prefix/   the libraries: every library .deb extracted with dpkg-deb -x (prefix/usr/...)
#   DIR/tools/    cmake, ninja, pkgconf and the libraries only they use (kept out of
#                 LD_LIBRARY_PATH; their executables find them through an $ORIGIN rpath)
#   DIR/bin/      cmake, ctest, cpack, ninja, pkg-config (links into tools/)
#   DIR/env.sh    `source DIR/env.sh` on the node: CMAKE_PREFIX_PATH, PKG_CONFIG_PATH,
#                 LD_LIBRARY_PATH, CPATH (Debian's multiarch jconfig.h) and PATH
#   DIR/packages.txt  name, version and architecture of every bundled package
#   DIR.tar.gz    everything above except debs/, to copy to the node and unpack anywhere
#
# Which packages: the roots below (what scripts/install_deps.sh installs for the C++ build,
# without libtorch: the node's pip PyTorch provides it) and their dependency closure from
# `apt-cache depends --recurse` (Depends and Pre-Depends only), minus what the node is assumed
# to have already: the closure of build-essential and of every Priority: required / Essential
# package (a minimal Debian 12 with a C/C++ compiler: libc6, libstdc++6, zlib1g, ...). The
# bundle is built from Debian 12 binaries, so the node needs glibc 2.36 / GCC 12 or newer
# (Debian 12, or a distribution at least as new); env.sh warns when its glibc is older.
#
# Idempotent: a second run re-downloads nothing already in DIR/debs, rebuilds DIR/prefix,
# DIR/tools and DIR.tar.gz from the .debs and drops .debs no longer needed.
set -euo pipefail

prog=bundle_offline.sh
die() { echo "$prog: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

out=stoker-deps
arch=""
tests=1
tools=1
data=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] && [ -n "$2" ] || die "--out needs a directory"; out="$2"; shift 2 ;;
    --out=*) out="${1#--out=}"; [ -n "$out" ] || die "--out needs a directory"; shift ;;
    --arch) [ $# -ge 2 ] && [ -n "$2" ] || die "--arch needs an architecture (e.g. amd64)"; arch="$2"; shift 2 ;;
    --arch=*) arch="${1#--arch=}"; [ -n "$arch" ] || die "--arch needs an architecture (e.g. amd64)"; shift ;;
    --no-tests) tests=0; shift ;;
    --no-tools) tools=0; shift ;;
    --with-data) data=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (allowed: --out DIR, --arch ARCH, --no-tests, --no-tools, --with-data, --help)" ;;
  esac
done

for tool in apt-get apt-cache dpkg dpkg-deb tar gzip; do
  command -v "$tool" >/dev/null || die "needs '$tool' (run this on a Debian machine with apt access)"
done
native=$(dpkg --print-architecture)
[ -n "$arch" ] || arch="$native"
if [ "$arch" != "$native" ] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
  die "architecture '$arch' is not enabled here (native: $native; as root: dpkg --add-architecture $arch && apt-get update)"
fi
case "$arch" in
  amd64) triplet=x86_64-linux-gnu ;;
  arm64) triplet=aarch64-linux-gnu ;;
  ppc64el) triplet=powerpc64le-linux-gnu ;;
  *) triplet=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH 2>/dev/null) ||
       die "unknown multiarch triplet for '$arch' (install dpkg-dev)" ;;
esac
suffix=""
[ "$arch" = "$native" ] || suffix=":$arch"

out="${out%/}"
[ -n "$out" ] || die "--out must not be /"
mkdir -p "$out" 2>/dev/null || die "cannot create the output directory '$out'"
out=$(cd "$out" && pwd)
name=$(basename "$out")
parent=$(dirname "$out")

lib_roots=(libjpeg62-turbo-dev libturbojpeg0-dev libpng-dev libwebp-dev libtiff-dev libgif-dev zlib1g-dev
           libcli11-dev libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libhdf5-dev
           libdlpack-dev)  # dlpack: the Python extension's header
[ "$tests" = 1 ] && lib_roots+=(libgtest-dev libgmock-dev)
[ "$data" = 1 ] && lib_roots+=(dataset-fashion-mnist)
tool_roots=()
[ "$tools" = 1 ] && tool_roots=(cmake ninja-build pkgconf)

# Package names of the dependency closure (Depends/Pre-Depends), virtual packages dropped.
closure() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "$@" | grep -v -e '^ ' -e '^<' | sed 's/:.*//' | sort -u
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "resolving the dependency closure ($arch)"
mapfile -t required < <(apt-cache dumpavail |
  awk '/^Package:/ { p = $2 } /^(Priority: required|Essential: yes)/ { print p }' | sort -u)
closure build-essential "${required[@]}" > "$work/base"
# A root that apt cannot resolve is an error, not a silently smaller bundle.
for p in "${lib_roots[@]}" "${tool_roots[@]}"; do
  apt-cache show --no-all-versions "$p$suffix" >/dev/null 2>&1 ||
    die "package '$p$suffix' is unknown to apt here (apt-get update? Debian 12 main enabled?)"
done
# Base libraries that other distributions name differently are bundled all the same:
# libunistring2 (libunistring.so.2; Ubuntu 24.04 has .so.5) is what libpsl5 needs, and through
# it libcurl, the bundle's HDF5 and cmake. Without it both stopped loading on an Ubuntu node.
renamed_elsewhere=(libunistring2)
{ closure "${lib_roots[@]/%/$suffix}" | comm -23 - "$work/base"
  closure "${lib_roots[@]/%/$suffix}" | comm -12 - <(printf '%s\n' "${renamed_elsewhere[@]}" | sort)
} | sort -u > "$work/libs"
: > "$work/tools"
if [ "$tools" = 1 ]; then
  closure "${tool_roots[@]/%/$suffix}" | comm -23 - "$work/base" | comm -23 - "$work/libs" > "$work/tools"
fi

# Download into debs/ what is not there yet (file names carry the version).
mkdir -p "$out/debs"
: > "$work/keep"
: > "$work/fetch"
while read -r pkg; do
  [ -n "$pkg" ] || continue
  line=$(apt-cache show --no-all-versions "$pkg$suffix" | awk '/^Version:/ { v = $2 } /^Architecture:/ { a = $2 } END { print v, a }')
  version=${line% *}; parch=${line#* }
  file="${pkg}_${version//:/%3a}_${parch}.deb"
  echo "$file" >> "$work/keep"
  [ -s "$out/debs/$file" ] || echo "$pkg$suffix" >> "$work/fetch"
done < <(cat "$work/libs" "$work/tools")
if [ -s "$work/fetch" ]; then
  echo "downloading $(wc -l < "$work/fetch") packages into $out/debs"
  (cd "$out/debs" && xargs apt-get download -q < "$work/fetch") ||
    die "apt-get download failed (see above)"
fi
for f in "$out/debs"/*.deb; do
  [ -e "$f" ] || continue
  grep -qxF "$(basename "$f")" "$work/keep" || rm -f "$f"
done

deb_of() { awk -v p="$1_" 'index($0, p) == 1 { print; exit }' "$work/keep"; }

echo "extracting into $out/prefix and $out/tools"
rm -rf "${out:?}/prefix" "${out:?}/tools" "${out:?}/bin"
mkdir -p "$out/prefix" "$out/bin"
: > "$out/packages.txt"
extract() {  # list dest
  local pkg file
  while read -r pkg; do
    file=$(deb_of "$pkg")
    [ -n "$file" ] && [ -s "$out/debs/$file" ] || die "missing $out/debs/${pkg}_*.deb after download"
    dpkg-deb -x "$out/debs/$file" "$2"
    dpkg-deb -f "$out/debs/$file" Package Version Architecture | awk '{ printf "%s ", $2 } END { print "" }' >> "$out/packages.txt"
  done < "$1"
}
extract "$work/libs" "$out/prefix"
if [ "$tools" = 1 ]; then
  mkdir -p "$out/tools"
  extract "$work/tools" "$out/tools"
fi

# Documentation, manual pages and translations are not needed to build (the copyright files stay).
# HDF5's compiler wrappers (h5cc ...) name /usr paths; without them CMake's FindHDF5 looks in
# CMAKE_PREFIX_PATH (include/hdf5/serial, lib/<triplet>/hdf5/serial) instead.
rm -f "$out/prefix/usr/bin/"h5*
for root in "$out/prefix" "$out/tools"; do
  [ -d "$root/usr/share" ] || continue
  rm -rf "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/locale" "$root/usr/share/lintian"
  [ -d "$root/usr/share/doc" ] && find "$root/usr/share/doc" ! -type d ! -name copyright -delete
done

# Relocation. 1) a merged /usr: files some packages still ship in /lib, /bin, /sbin move to
#    usr/ (the tools' rpath names one directory). Absolute symlinks become relative ones. A
#    development link into a package the node already has (zlib1g-dev's libz.so ->
#    libz.so.1.2.13 of zlib1g) would dangle: it is removed and written down in
#    prefix/system-links.txt with its soname, and env.sh points it at the node's own copy
#    (libz.so.1). Without that link CMake would take the static archive beside it (libz.a),
#    which is not position-independent and cannot go into the Python extension.
merge_usr() {
  local root="$1" d
  for d in lib bin sbin; do
    [ -d "$root/$d" ] && [ ! -L "$root/$d" ] || continue
    mkdir -p "$root/usr/$d"
    cp -a "$root/$d/." "$root/usr/$d/"
    rm -rf "${root:?}/$d"
  done
}
fix_links() {
  local root="$1" link target dest
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case "$target" in
      /*) dest="$root$target"
          [ -e "$dest" ] || [ ! -e "$root/usr$target" ] || dest="$root/usr$target"
          ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$dest")" "$link" ;;
    esac
    if [ ! -e "$link" ]; then
      case "$link" in
        */lib/"$triplet"/lib*.so) echo "${link#"$root/"} $(basename "$target" | sed -E 's/^(lib.*\.so\.[0-9]+).*/\1/')" \
                                     >> "$root/system-links.txt" ;;
      esac
      rm -f "$link"
    fi
  done < <(find "$root" -type l -print0)
}
merge_usr "$out/prefix"
fix_links "$out/prefix"
if [ "$tools" = 1 ]; then
  merge_usr "$out/tools"
  fix_links "$out/tools"
fi
# 2) pkg-config files: /usr/... becomes ${pcfiledir}/<up>/usr/..., valid wherever DIR lies.
while IFS= read -r -d '' pc; do
  rel=$(dirname "${pc#"$out/prefix/"}")
  up=$(echo "$rel" | sed -E 's#[^/]+#..#g')
  sed -i -E 's#(^[A-Za-z_][A-Za-z0-9_.]*=|[[:space:]]|-I|-L)/usr(/|[[:space:]]|$)#\1${pcfiledir}/'"$up"'/usr\2#g' "$pc"
done < <(find "$out/prefix" -name '*.pc' -print0)
# 3) CMake package files: most compute their prefix from their own location, a few (e.g.
#    libjpeg-turbo's) name /usr; those paths become ${CMAKE_CURRENT_LIST_DIR}/<up>/usr/...
while IFS= read -r -d '' file; do
  grep -q '"/usr[/"]' "$file" || continue
  rel=$(dirname "${file#"$out/prefix/"}")
  up=$(echo "$rel" | sed -E 's#[^/]+#..#g')
  # The "/usr move" guard of CMake's generated files (_realOrig and the indented set() it
  # guards) compares with the system path on purpose and stays as it is.
  sed -i -E '/_realOrig|^[[:space:]]+set\((_IMPORT_PREFIX|PACKAGE_PREFIX_DIR) "\/usr/b
             s#"/usr(/|")#"${CMAKE_CURRENT_LIST_DIR}/'"$up"'/usr\1#g' "$file"
done < <(find "$out/prefix" -name '*.cmake' -print0)
left=$(grep -rnE '(^|[^.])/usr/(include|lib)' --include='*.cmake' --include='*.pc' "$out/prefix" |
       grep -vE '^[^:]+:[0-9]+:([[:space:]]*#|.*_realOrig|[[:space:]]+set\((_IMPORT_PREFIX|PACKAGE_PREFIX_DIR) "/usr)' || true)
if [ -n "$left" ]; then
  echo "$left" | sed 's/^/  /' >&2
  die "the bundle would not be relocatable: /usr paths left in the files above"
fi
# 4) the tools run from tools/usr/bin and load their own libraries through an $ORIGIN rpath
#    (DT_RPATH, which also covers the libraries' own dependencies). patchelf comes from the
#    archive too when it is not installed.
if [ "$tools" = 1 ]; then
  patchelf=$(command -v patchelf || true)
  if [ -z "$patchelf" ]; then
    (cd "$work" && apt-get download -q patchelf >/dev/null) || die "could not download patchelf"
    dpkg-deb -x "$work"/patchelf_*.deb "$work/patchelf"
    patchelf="$work/patchelf/usr/bin/patchelf"
  fi
  for exe in cmake ctest cpack pkgconf; do
    "$patchelf" --force-rpath --set-rpath "\$ORIGIN/../lib/$triplet" "$out/tools/usr/bin/$exe"
  done
  for exe in cmake ctest cpack ninja pkgconf; do
    ln -s "../tools/usr/bin/$exe" "$out/bin/$exe"
  done
  ln -s pkgconf "$out/bin/pkg-config"
  compgen -G "$out/tools/usr/share/cmake-*/Modules" >/dev/null || die "cmake-data was not extracted"
fi
rmdir "$out/bin" 2>/dev/null || true

glibc=$(apt-cache show --no-all-versions "libc6$suffix" | awk '/^Version:/ { split($2, v, "-"); print v[1]; exit }')
cat > "$out/env.sh" <<EOF
# shellcheck shell=bash disable=SC2154,SC2296
# Sourced (bash or zsh) on the build node: \`source $name/env.sh\`. Points CMake, pkg-config,
# the compiler and the loader at the libraries of this bundle; safe to source twice.
# Written by stoker's scripts/bundle_offline.sh for Debian $arch ($triplet).
if [ -n "\${BASH_SOURCE:-}" ]; then STOKER_DEPS=\${BASH_SOURCE[0]}; elif [ -n "\${ZSH_VERSION:-}" ]; then STOKER_DEPS=\${(%):-%x}; else STOKER_DEPS=\$0; fi
STOKER_DEPS=\$(cd "\$(dirname "\$STOKER_DEPS")" && pwd)
export STOKER_DEPS
_stoker_prepend() {  # VAR DIR: put DIR first in the colon list VAR, once
  eval "_stoker_value=\\\${\$1:-}"
  case ":\$_stoker_value:" in *":\$2:"*) ;; *) export "\$1=\$2\${_stoker_value:+:\$_stoker_value}" ;; esac
  unset _stoker_value
}
_stoker_prepend CMAKE_PREFIX_PATH "\$STOKER_DEPS/prefix/usr"
_stoker_prepend PKG_CONFIG_PATH "\$STOKER_DEPS/prefix/usr/share/pkgconfig"
_stoker_prepend PKG_CONFIG_PATH "\$STOKER_DEPS/prefix/usr/lib/$triplet/pkgconfig"
_stoker_prepend LD_LIBRARY_PATH "\$STOKER_DEPS/prefix/usr/lib/$triplet"
# Debian keeps jconfig.h (included by jpeglib.h) in the multiarch include directory.
_stoker_prepend CPATH "\$STOKER_DEPS/prefix/usr/include/$triplet"
[ -d "\$STOKER_DEPS/bin" ] && _stoker_prepend PATH "\$STOKER_DEPS/bin"
unset -f _stoker_prepend
# Development links into libraries every system has (libz.so, libcrypto.so) point at the
# system's own copy (see system-links.txt), so that shared objects link them as such.
if [ -f "\$STOKER_DEPS/prefix/system-links.txt" ]; then
  while read -r _stoker_link _stoker_soname; do
    [ -e "\$STOKER_DEPS/prefix/\$_stoker_link" ] && continue
    for _stoker_dir in /usr/lib/$triplet /lib/$triplet /usr/lib64 /lib64 /usr/lib; do
      if [ -e "\$_stoker_dir/\$_stoker_soname" ]; then
        ln -sfn "\$_stoker_dir/\$_stoker_soname" "\$STOKER_DEPS/prefix/\$_stoker_link"
        break
      fi
    done
  done < "\$STOKER_DEPS/prefix/system-links.txt"
  unset _stoker_link _stoker_soname _stoker_dir
fi
# The bundle leaves out what every Debian 12 system has (libunistring.so.2, ...), which other
# distributions may lack or name differently (Ubuntu 24.04: libunistring.so.5). A bundled
# library that needs such a one (libcurl, and HDF5 through it) would stop every program that
# loads it, so it is moved to prefix/unusable/ once, here, and the system's own copy (if any)
# is used instead; CMake then finds the system's, or builds without what needs it.
_stoker_lib="\$STOKER_DEPS/prefix/usr/lib/$triplet"
# A tarball unpacked again over the folder brings moved libraries back: check again then.
for _stoker_file in \$(ls "\$STOKER_DEPS/prefix/unusable" 2>/dev/null); do
  if [ -e "\$_stoker_lib/\$_stoker_file" ]; then rm -f "\$STOKER_DEPS/prefix/.checked"; fi
done
unset _stoker_file
if [ ! -e "\$STOKER_DEPS/prefix/.checked" ] && command -v ldd >/dev/null 2>&1; then
  _stoker_moved=""
  for _stoker_pass in 1 2 3; do  # a library that needed a moved one goes too
    for _stoker_so in \$(ls "\$_stoker_lib" 2>/dev/null | grep '\.so\.'); do
      [ -f "\$_stoker_lib/\$_stoker_so" ] && [ ! -L "\$_stoker_lib/\$_stoker_so" ] || continue
      if ldd "\$_stoker_lib/\$_stoker_so" 2>/dev/null | grep -q 'not found'; then
        mkdir -p "\$STOKER_DEPS/prefix/unusable"
        for _stoker_file in \$(ls "\$_stoker_lib" | grep "^\${_stoker_so%%.so*}\\.so"); do
          mv "\$_stoker_lib/\$_stoker_file" "\$STOKER_DEPS/prefix/unusable/"
        done
        _stoker_moved="\$_stoker_moved \${_stoker_so%%.so*}"
      fi
    done
  done
  if [ -n "\$_stoker_moved" ]; then
    echo "stoker-deps: moved to \$STOKER_DEPS/prefix/unusable (they need libraries this system lacks; its own copies are used where it has them):\$_stoker_moved" >&2
  fi
  touch "\$STOKER_DEPS/prefix/.checked"
  unset _stoker_moved _stoker_pass _stoker_so _stoker_file
fi
unset _stoker_lib
if command -v getconf >/dev/null 2>&1; then
  _stoker_glibc=\$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print \$2 }')
  if [ -n "\$_stoker_glibc" ] && [ "\$(printf '%s\n%s\n' "$glibc" "\$_stoker_glibc" | sort -V | head -n1)" != "$glibc" ]; then
    echo "stoker-deps: this system has glibc \$_stoker_glibc; the bundle was built for glibc $glibc or newer" >&2
  fi
  unset _stoker_glibc
fi
EOF

tarball="$parent/$name.tar.gz"
echo "writing $tarball"
tar -C "$parent" --exclude="$name/debs" --sort=name --owner=0 --group=0 --numeric-owner \
    -cf - "$name" | gzip -n > "$tarball.tmp"
mv "$tarball.tmp" "$tarball"

libs_n=$(grep -c . "$work/libs" || true)
tools_n=$(grep -c . "$work/tools" || true)
echo "bundled $((libs_n + tools_n)) packages ($libs_n libraries, $tools_n tools): $(du -sh "$tarball" | cut -f1) in $tarball"
echo "on the node: tar xzf $name.tar.gz && source $name/env.sh   (then see docs/guide/install.md, \"Offline GPU node\")"
