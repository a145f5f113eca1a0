#!/bin/sh
# Debian packages the Soft-RoCE VM test needs on the host (run as root).
# The guest kernel itself is not installed: run-vm-tests.sh downloads the
# linux-image package into the build tree at test time and unpacks it there.
set -e
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
    qemu-system-x86 \
    busybox-static \
    rdma-core \
    ibverbs-providers \
    ibverbs-utils \
    libibverbs-dev \
    librdmacm-dev \
    iproute2 \
    kmod \
    xz-utils \
    coreutils
