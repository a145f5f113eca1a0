/*
 * The version of the Thallium API this layer implements, as Thallium's
 * generated thallium/config.hpp gives it (thallium.hpp includes it). The
 * installed thallium.pc and thallium-config.cmake read their version from
 * these lines (CMakeLists.txt), so the three cannot disagree.
 */
#ifndef THALLIUM_CONFIG_HPP
#define THALLIUM_CONFIG_HPP

#define THALLIUM_VERSION_MAJOR 0
#define THALLIUM_VERSION_MINOR 14
#define THALLIUM_VERSION_PATCH 0
#define THALLIUM_VERSION "0.14.0"
/* major * 1000000 + minor * 1000 + patch, as Thallium computes it. */
#define THALLIUM_VERSION_NUM 14000

#endif
