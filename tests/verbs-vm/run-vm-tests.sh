#!/bin/bash
# Run test commands over real verbs traffic: boot a qemu guest with Debian's
# kernel, create a Soft-RoCE device (rxe0 on dummy0, 10.11.0.1/24) and run
# the commands inside it against the host's build tree.
#
# Usage: run-vm-tests.sh --build-dir DIR [--kvm] [--timeout SEC] [--] CMD...
#   CMD   commands run from the build tree, e.g. plugins/verbs/test_verbs
#         (one argument each; a command may contain spaces and arguments
#         and begin with "env NAME=value"; its program is relative to the
#         build tree or absolute). The guest sets QS_VERBS_INFO and
#         QS_TEST_INFO to the verbs info string. QS_VM_TESTS, if set,
#         replaces them (commands separated by ';').
#   --kvm use KVM (QS_VM_KVM=1 too); the default is TCG, the only mode
#         that boots Debian's kernel on the machines this project runs on.
#   --timeout  whole-VM wall-clock limit (QS_VM_TIMEOUT, default 600 s).
# Other environment: QS_VM_CMD_TIMEOUT (per command, default 300 s),
# QS_VERBS_INFO (passed to the tests), QS_VM_QEMU (the qemu binary),
# QS_VM_KERNEL_DIR (where the kernel package is kept and unpacked; default
# DIR/verbs-vm/kernel, so another build tree can share one download),
# QS_VM_WORK_DIR (the initramfs and serial log; default DIR/verbs-vm, so a
# second guest can run beside ctest's without sharing its files).
#
# Exit status: that of the commands in the guest (the first failing one);
# 77 (ctest's skip code) when qemu, busybox or the kernel package is not
# available here, with the reason printed. A failing run ends by naming
# each failing command again, with the lines of its output that say what
# failed (CI logs keep the head and the tail of a long output).
#
# The kernel package is fetched with apt-get download into
# DIR/verbs-vm/kernel and reused by later runs; it is never committed.
set -u
set -o pipefail

SKIP=77
here=$(cd "$(dirname "$0")" && pwd)
build_dir=""
use_kvm=${QS_VM_KVM:-0}
vm_timeout=${QS_VM_TIMEOUT:-600}
cmd_timeout=${QS_VM_CMD_TIMEOUT:-300}
info=${QS_VERBS_INFO:-verbs://rxe0/10.11.0.1:0}
tests=()

while [ $# -gt 0 ]; do
    case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --kvm) use_kvm=1; shift ;;
    --timeout) vm_timeout=$2; shift 2 ;;
    --) shift; tests+=("$@"); break ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) tests+=("$1"); shift ;;
    esac
done
if [ -n "${QS_VM_TESTS:-}" ]; then
    IFS=';' read -r -a tests <<< "$QS_VM_TESTS"
fi
# Empty arguments stand for programs this build does not have.
kept=()
for t in "${tests[@]}"; do
    [ -n "$t" ] && kept+=("$t")
done
tests=("${kept[@]}")

log() { echo "verbs-vm: $*"; }
skip() { log "SKIPPED: $*"; exit $SKIP; }
die() { log "ERROR: $*"; exit 1; }

[ -n "$build_dir" ] || die "--build-dir is required"
build_dir=$(cd "$build_dir" && pwd) || die "no build directory $build_dir"
[ ${#tests[@]} -gt 0 ] || die "no test command given"
for t in "${tests[@]}"; do
    # A command may begin with "env NAME=value ...": check the program.
    read -r -a words <<< "$t"
    i=0
    [ "${words[0]}" = env ] && i=1
    while [[ "${words[$i]:-}" == *=* ]]; do i=$((i + 1)); done
    bin=${words[$i]:-}
    case "$bin" in /*) ;; *) bin="$build_dir/$bin" ;; esac
    [ -x "$bin" ] || die "test command not found or not built: $bin"
done

# What the host needs. Missing pieces skip, they do not fail: a machine
# without qemu cannot run this test, which says nothing about the code.
qemu=${QS_VM_QEMU:-$(command -v qemu-system-x86_64)}
[ -n "$qemu" ] && [ -x "$qemu" ] ||
    skip "qemu-system-x86_64 not found (tests/verbs-vm/install-deps.sh installs it)"
busybox=/bin/busybox
if [ ! -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
    skip "a static busybox is needed for the initramfs (package busybox-static)"
fi
for tool in apt-get apt-cache dpkg depmod modprobe xz; do
    command -v "$tool" >/dev/null || skip "$tool not found"
done
command -v rdma >/dev/null || skip "the rdma tool (package iproute2) is needed in the guest"
[ -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] ||
    ls /usr/lib/*/libibverbs/librxe-* >/dev/null 2>&1 ||
    skip "the rxe provider (package ibverbs-providers) is not installed"

work=${QS_VM_WORK_DIR:-$build_dir/verbs-vm}
kdir=${QS_VM_KERNEL_DIR:-$work/kernel}
mkdir -p "$kdir"

# The newest Debian 6.1 kernel image the package lists know about.
pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
    awk '{print $1}' | sort -V | tail -n 1)
if [ -z "$pkg" ]; then
    # Reuse an earlier download when the lists are gone.
    pkg=$(ls "$kdir" 2>/dev/null | sed -n 's/^\(linux-image-6\.1\.0-[0-9]*-amd64\)_.*\.deb$/\1/p' |
        sort -V | tail -n 1)
fi
[ -n "$pkg" ] || skip "no linux-image-6.1.0-*-amd64 package known to apt (run apt-get update)"
kver=${pkg#linux-image-}
root="$kdir/root-$kver"

if [ ! -f "$root/.unpacked" ]; then
    deb=$(ls "$kdir/${pkg}"_*.deb 2>/dev/null | head -n 1)
    if [ -z "$deb" ]; then
        log "downloading $pkg"
        (cd "$kdir" && timeout 300 apt-get download "$pkg") >"$kdir/download.log" 2>&1 ||
            skip "apt-get download $pkg failed: $(tail -n 2 "$kdir/download.log")"
        deb=$(ls "$kdir/${pkg}"_*.deb | head -n 1)
    fi
    log "unpacking $(basename "$deb")"
    rm -rf "$root"
    dpkg -x "$deb" "$root" || die "dpkg -x $deb failed"
    depmod -b "$root" "$kver" || die "depmod failed"
    touch "$root/.unpacked"
fi
vmlinuz="$root/boot/vmlinuz-$kver"
[ -f "$vmlinuz" ] || die "no kernel image in $pkg"

# Under TCG the uncompressed ELF kernel (it has a PVH entry note) boots a
# few seconds faster than the bzImage, which must decompress itself
# instruction by emulated instruction. The payload is an xz stream inside
# vmlinuz; fall back to vmlinuz if it cannot be found.
kernel="$vmlinuz"
vmlinux="$kdir/vmlinux-$kver"
if [ ! -s "$vmlinux" ]; then
    off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" 2>/dev/null | head -n 1 | cut -d: -f1)
    if [ -n "$off" ]; then
        tail -c +$((off + 1)) "$vmlinuz" | xz -dc 2>/dev/null >"$vmlinux.tmp"
        if [ "$(head -c 4 "$vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
            mv "$vmlinux.tmp" "$vmlinux"
        else
            rm -f "$vmlinux.tmp"
        fi
    fi
fi
[ -s "$vmlinux" ] && kernel="$vmlinux"

# The initramfs: busybox, the modules in load order, the init script and
# what it should run.
initrd_dir="$work/initramfs"
rm -rf "$initrd_dir"
mkdir -p "$initrd_dir"/{bin,sbin,proc,sys,dev,tmp,host,qs/modules}
cp "$busybox" "$initrd_dir/bin/busybox"
cp "$here/guest-init.sh" "$initrd_dir/init"
chmod +x "$initrd_dir/init"
: >"$initrd_dir/qs/modules.list"
wanted="crc32_generic crc32-pclmul rdma_rxe ib_uverbs rdma_ucm dummy virtio_pci 9pnet_virtio 9p"
for m in $wanted; do
    modprobe -d "$root" -S "$kver" --show-depends "$m" 2>/dev/null
done | awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++' | while read -r ko; do
    src=$ko
    [ -f "$src" ] || src="$root$ko"
    name=$(basename "$src")
    case "$name" in
    *.xz) xz -dc "$src" >"$initrd_dir/qs/modules/${name%.xz}"; name=${name%.xz} ;;
    *) cp "$src" "$initrd_dir/qs/modules/$name" ;;
    esac
    echo "$name" >>"$initrd_dir/qs/modules.list"
done
grep -q rdma_rxe "$initrd_dir/qs/modules.list" ||
    die "rdma_rxe module not found in $pkg"
grep -q rdma_ucm "$initrd_dir/qs/modules.list" ||
    die "rdma_ucm module not found in $pkg"
cat >"$initrd_dir/qs/config" <<EOF
QS_BUILD_DIR='$build_dir'
QS_SOURCE_DIR='$(cd "$(dirname "$0")/../.." && pwd)'
QS_VERBS_INFO='$info'
QS_CMD_TIMEOUT='$cmd_timeout'
EOF
printf '%s\n' "${tests[@]}" >"$initrd_dir/qs/tests"
(cd "$initrd_dir" && find . | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null | gzip -1) \
    >"$work/initramfs.cpio.gz" || die "cannot build the initramfs"

if [ "$use_kvm" = 1 ]; then
    accel=(-accel kvm -cpu host)
else
    accel=(-accel tcg,thread=multi -cpu max)
fi
serial="$work/serial.log"
log "booting $kver ($(basename "$kernel"), ${accel[1]}) for: ${tests[*]}"
start=$(date +%s)
timeout -k 5 "$vm_timeout" "$qemu" "${accel[@]}" \
    -m 1024 -smp 2 -nographic -no-reboot -nic none \
    -kernel "$kernel" -initrd "$work/initramfs.cpio.gz" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$build_dir",mount_tag=buildtree,security_model=none,multidevs=remap \
    </dev/null 2>&1 | tee "$serial"
qemu_rc=$?
log "guest ran $(( $(date +%s) - start )) s (qemu exit status $qemu_rc)"

status=$(tr -d '\r' <"$serial" | sed -n 's/.*QS_VM_RESULT status=\([0-9][0-9]*\).*/\1/p' | tail -n 1)
if [ -z "$status" ]; then
    [ "$qemu_rc" = 124 ] && die "the guest did not finish within $vm_timeout s"
    die "the guest stopped without reporting a result (see $serial)"
fi
if tr -d '\r' <"$serial" | grep -q 'QS_VM_RESULT status=[0-9]* setup=failed'; then
    die "guest setup failed (modules, 9p mounts or rxe0): see $serial"
fi
log "guest tests exit status $status"
# A failure's details sit in the middle of a long log, which CI shows only
# in part: repeat, at the end, each failing command with the lines of its
# output that name what failed.
if [ "$status" != 0 ]; then
    tr -d '\r' <"$serial" | awk '
        function show(from, to, arr,   i) {
            for (i = (from < 1 ? 1 : from); i <= to; i++) print "verbs-vm:   " arr[i]
        }
        /^qs-guest: \[[0-9]+\] / && !/exit status/ { cmd = $0; n = 0; m = 0; next }
        /^qs-guest: \[[0-9]+\] exit status/ {
            if ($0 !~ /exit status 0 /) {
                print "verbs-vm: failed: " cmd; print "verbs-vm:   " $0
                print "verbs-vm:   lines that name an error:"
                show(m - 14, m, hit)
                print "verbs-vm:   the last lines:"
                show(n - 11, n, all)
            }
            n = 0; m = 0; next
        }
        { all[++n] = $0 }
        /FAILED|ERROR|error:|Assert|assert|Sanitizer|Timeout|timed out|[Ss]egmentation|not clean|exit [1-9]/ {
            hit[++m] = $0 }'
fi
exit "$status"
