#!/bin/sh
# Configures the project with QS_INSTALL_MERCURY_NAMES=OFF and checks what
# its install step would write: quicksilver.pc and the quicksilver CMake
# package, and none of mercury.pc, na.pc, mercury_util.pc, margo.pc or the
# mercury / margo CMake packages. Then the same with the default (ON).
#   check_names_off.sh SOURCE_DIR SCRATCH_DIR
set -eu
src=$1
dir=$2
for mode in OFF ON; do
    rm -rf "$dir"
    cmake -S "$src" -B "$dir" -DQS_INSTALL_MERCURY_NAMES=$mode \
        -DQS_BUILD_TESTS=OFF -DQS_BUILD_EXAMPLES=OFF -DQS_BUILD_BENCH=OFF \
        -DQS_PLUGIN_OFI=OFF -DQS_PLUGIN_VERBS=OFF >"$dir.log" 2>&1 ||
        { cat "$dir.log"; exit 1; }
    rules=$(cat "$dir/cmake_install.cmake")
    for want in quicksilver.pc quicksilver-config.cmake quicksilver-targets.cmake; do
        echo "$rules" | grep -q "$want" ||
            { echo "check_names_off: $mode: $want not installed"; exit 1; }
    done
    for name in mercury.pc na.pc mercury_util.pc margo.pc \
                mercury-config.cmake margo-config.cmake; do
        if echo "$rules" | grep -q "/$name"; then found=yes; else found=no; fi
        if [ $mode = OFF ] && [ $found = yes ]; then
            echo "check_names_off: OFF still installs $name"; exit 1
        fi
        if [ $mode = ON ] && [ $found = no ]; then
            echo "check_names_off: ON does not install $name"; exit 1
        fi
    done
    echo "QS_INSTALL_MERCURY_NAMES=$mode: OK"
done
rm -rf "$dir" "$dir.log"
