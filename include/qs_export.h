/*
 * QS_EXPORT: the mark of Quicksilver's public API.
 *
 * The library is built with hidden visibility (-fvisibility=hidden), so a
 * function is exported from libquicksilver.so only when its declaration in
 * a header under include/ starts with QS_EXPORT:
 *
 *     QS_EXPORT hg_return_t HG_Example(hg_handle_t handle);
 *
 * Everything else, internal functions shared between the library's files
 * included, stays private to the library. The ctest case exported_symbols
 * checks that the exported symbols and the functions declared in these
 * headers are the same set, and names the function and this macro when
 * they differ. The Thallium headers (C++) are header-only and need no mark.
 */
#ifndef QS_EXPORT_H
#define QS_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define QS_EXPORT __attribute__((visibility("default")))
#else
#define QS_EXPORT
#endif

#endif /* QS_EXPORT_H */
