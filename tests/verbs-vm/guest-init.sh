#!/bin/busybox sh
# /init of the Soft-RoCE test guest (see run-vm-tests.sh, which packs this
# file into the initramfs with /qs/config, /qs/modules and /qs/tests).
#
# It loads the RDMA modules, creates dummy0 with 10.11.0.1/24 and the rxe0
# Soft-RoCE device on it, mounts the host's / read-only and the build tree
# read-write over 9p, runs each test command with chroot into the host
# root, prints "QS_VM_RESULT status=<n>" and powers off. The host reads that
# line from the serial log: it is the only channel back. A failed setup
# prints "QS_VM_RESULT status=3 setup=failed" (a test command may exit 3
# too: cmocka's status is its count of failed tests).

/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

result() {
    echo "QS_VM_RESULT status=$1${2:+ $2}"
    sync
    poweroff -f
    sleep 10
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
. /qs/config

echo "qs-guest: kernel $(uname -r), loading modules"
while read -r mod; do
    [ -n "$mod" ] || continue
    if ! insmod "/qs/modules/$mod" 2>/tmp/insmod.err; then
        # Already built in or loaded as a dependency: not an error.
        grep -q "File exists" /tmp/insmod.err || {
            echo "qs-guest: insmod $mod failed: $(cat /tmp/insmod.err)"
            result 3 setup=failed
        }
    fi
done < /qs/modules.list

mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose \
    hostroot /host || { echo "qs-guest: cannot mount the host root"; result 3 setup=failed; }
mount --bind /dev /host/dev
mount --bind /proc /host/proc
mount --bind /sys /host/sys
# Tests need a writable /tmp, but the build and source trees may live under
# the host's /tmp (a CI clone, say): keep the host's view of /tmp reachable,
# then put those trees back on top of the fresh tmpfs.
mkdir -p /qs/hosttmp
mount --bind /host/tmp /qs/hosttmp
mount -t tmpfs tmpfs /host/tmp
mount -t tmpfs tmpfs /host/run 2>/dev/null
for tree in "$QS_BUILD_DIR" "$QS_SOURCE_DIR"; do
    case "$tree" in
    /tmp/?*)
        top=${tree#/tmp/}
        top=${top%%/*}
        if [ ! -d "/host/tmp/$top" ]; then
            mkdir -p "/host/tmp/$top"
            mount --bind "/qs/hosttmp/$top" "/host/tmp/$top"
        fi
        ;;
    esac
done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 \
    buildtree "/host$QS_BUILD_DIR" ||
    { echo "qs-guest: cannot mount the build tree"; result 3 setup=failed; }

# librdmacm cannot resolve routes over lo, so the device sits on a dummy
# interface with a real subnet.
ip link set lo up
# Loading the dummy module may already have created dummy0.
ip link show dummy0 >/dev/null 2>&1 || ip link add dummy0 type dummy
ip addr add 10.11.0.1/24 dev dummy0
ip link set dummy0 up
if ! chroot /host rdma link add rxe0 type rxe netdev dummy0; then
    echo "qs-guest: rdma link add rxe0 failed"
    result 3 setup=failed
fi
chroot /host rdma link show

status=0
n=0
while read -r cmd; do
    [ -n "$cmd" ] || continue
    n=$((n + 1))
    echo "qs-guest: [$n] $cmd"
    t0=$(date +%s)
    chroot /host /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/tmp QS_VERBS_INFO="$QS_VERBS_INFO" QS_TEST_INFO="$QS_VERBS_INFO" \
        /bin/sh -c "cd '$QS_BUILD_DIR' && exec timeout -k 5 $QS_CMD_TIMEOUT $cmd"
    rc=$?
    echo "qs-guest: [$n] exit status $rc ($(( $(date +%s) - t0 )) s)"
    # 77 means "skipped" to ctest: inside the guest the device exists, so a
    # skip there is a failure to report, not to hide.
    [ "$rc" -eq 77 ] && rc=1
    [ "$status" -eq 0 ] && status=$rc
done < /qs/tests
echo "qs-guest: $n command(s) run"
result "$status"
