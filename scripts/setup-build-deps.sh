#!/usr/bin/env bash
# Installs what the build and the tests need besides Rust:
#   cmake, libclang   the ZFP plugin (plugins/zfp) builds zfp with cmake, and zfp-sys generates
#                     its bindings with bindgen, which needs libclang;
#   gfortran          tests/fortran.rs builds and runs the Fortran module bindings/fortran.
# As root it installs the missing ones from Debian's packages (cmake, libclang-dev, gfortran);
# otherwise it says what to install. Does nothing when all are there.
set -euo pipefail

have_libclang() {
  [ -n "${LIBCLANG_PATH:-}" ] && return 0
  ldconfig -p 2>/dev/null | grep -q 'libclang\(-[0-9.]*\)\?\.so' && return 0
  compgen -G '/usr/lib/llvm-*/lib/libclang.so*' > /dev/null
}

missing=()
command -v cmake > /dev/null || missing+=(cmake)
have_libclang || missing+=(libclang-dev)
command -v gfortran > /dev/null || missing+=(gfortran)
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-build-deps: cmake, libclang and gfortran are installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-build-deps: install ${missing[*]} (cmake, libclang-dev: plugins/zfp; gfortran: bindings/fortran)" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
echo "setup-build-deps: installed ${missing[*]}"
