#!/usr/bin/env bash
# Installs every Debian 12 package Quicksilver's build, tests, demo and
# coverage report need. Run as root. QS_DEPS_VM=0 skips the packages of the
# Soft-RoCE virtual machine test (qemu, busybox, rdma-core tools).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(build-essential cmake pkg-config clang libcmocka-dev lcov
      libfabric-dev libfabric-bin libibverbs-dev librdmacm-dev
      libjson-c-dev libcereal-dev gcovr doxygen g++ clang-format
      ninja-build valgrind)
if [ "${QS_DEPS_VM:-1}" = 1 ]; then
  pkgs+=(qemu-system-x86 busybox-static rdma-core ibverbs-providers
         ibverbs-utils iproute2 kmod xz-utils cpio)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: all packages present"
