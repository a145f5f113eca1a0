/*
 * Replays a fuzz target's corpus as an ordinary test: every file in the
 * directories (or files) named on the command line is fed to
 * LLVMFuzzerTestOneInput(). A crash or sanitizer report fails the test; an
 * empty corpus fails too, so a missing corpus cannot pass silently. A
 * target may also define fuzz_replay_check(), called after the corpus:
 * it returns NULL, or what makes the replay worthless (for example, a
 * corpus none of whose inputs gets past the first check any more), which
 * fails the test.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *fuzz_replay_check(void) __attribute__((weak));

static int
replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *nbuf = realloc(buf, cap);
            if (nbuf == NULL) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nbuf;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose(f);
    /* The target gets a buffer of exactly the input's size, as libFuzzer
     * gives it: a read one byte past the end then leaves the allocation,
     * and an ASan build reports it (inside the growth buffer it would
     * not). */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    if (len > 0)
        memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

int
main(int argc, char **argv)
{
    unsigned long count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) != 0)
                return 1;
            count++;
            continue;
        }
        DIR *dir = opendir(argv[i]);
        if (dir == NULL) {
            perror(argv[i]);
            return 1;
        }
        struct dirent *de;
        while ((de = readdir(dir)) != NULL) {
            if (de->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
            if (replay_file(path) != 0) {
                closedir(dir);
                return 1;
            }
            count++;
        }
        closedir(dir);
    }
    if (count == 0) {
        fprintf(stderr, "no corpus inputs found\n");
        return 1;
    }
    if (fuzz_replay_check != NULL) {
        const char *why = fuzz_replay_check();
        if (why != NULL) {
            fprintf(stderr, "replayed %lu inputs, but %s\n", count, why);
            return 1;
        }
    }
    printf("replayed %lu inputs: 0 crashes\n", count);
    return 0;
}
