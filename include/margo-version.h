/*
 * The version of the Margo API this library implements, under Margo's
 * names (Margo generates this header at build time). The installed
 * margo.pc and margo-config.cmake read their version from these lines
 * (cmake/QsInstall.cmake), so they cannot disagree.
 */
#ifndef MARGO_VERSION_H
#define MARGO_VERSION_H

#define MARGO_VERSION_MAJOR 0
#define MARGO_VERSION_MINOR 24
#define MARGO_VERSION_PATCH 0
#define MARGO_VERSION "0.24.0"
/* major * 100000 + minor * 100 + patch, as Margo computes it. */
#define MARGO_VERSION_NUM 2400

#endif
