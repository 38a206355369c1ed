#!/usr/bin/env bash
# Installs what `cargo build --workspace` needs besides Rust: the ZFP plugin (plugins/zfp) builds
# zfp with cmake, and zfp-sys generates its bindings with bindgen, which needs libclang. As root
# it installs Debian's cmake and libclang-dev when either is missing; otherwise it says what to
# install. Does nothing when both are there.
set -euo pipefail

have_libclang() {
  [ -n "${LIBCLANG_PATH:-}" ] && return 0
  ldconfig -p 2>/dev/null | grep -q 'libclang\(-[0-9.]*\)\?\.so' && return 0
  compgen -G '/usr/lib/llvm-*/lib/libclang.so*' > /dev/null
}

missing=()
command -v cmake > /dev/null || missing+=(cmake)
have_libclang || missing+=(libclang-dev)
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-build-deps: cmake and libclang are installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-build-deps: install ${missing[*]} (needed to build plugins/zfp)" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
echo "setup-build-deps: installed ${missing[*]}"
