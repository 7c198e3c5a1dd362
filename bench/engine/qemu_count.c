/* qemu_count.c — the instruction counter of bench/engine/qemu_count.sh: reads the log of one qemu
 * user-mode run made with -d in_asm,exec,nochain and prints the guest instructions it executed.
 *
 *   qemu_count LOG        (LOG is usually a pipe that qemu writes; "-" reads standard input)
 *
 * in_asm prints "IN: <symbol>" and then one "0x<pc>:  <encoding>  <insn>" line per instruction of each
 * block it translates; exec prints "Trace <cpu>: <host ptr> [<cs_base>/<pc>/<flags>/<cflags>] <symbol>"
 * each time a block runs (nochain: every time, none is skipped by chaining). A run counts the length of
 * the block's latest translation (qemu translates a pc again after JIT-written code changed it, or with
 * other flags), so the log is read in order. Written in C because the reader must keep up with qemu:
 * a Python reader took as long as qemu itself (about 1 µs a line), this one a tenth of that.
 * Exit codes: 0 success, 1 the log cannot be read, 2 usage error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* pc -> instructions of its latest translation: open addressing, grown at half full. */
static uint64_t* keys;
static uint32_t* lens;
static size_t cap = 1 << 16, used;

static size_t slot(uint64_t pc) {
    size_t i = (size_t)((pc * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
    while (keys[i] && keys[i] != pc) i = (i + 1) & (cap - 1);
    return i;
}

static void put(uint64_t pc, uint32_t n) {
    if (2 * (used + 1) > cap) {
        uint64_t* old_keys = keys;
        uint32_t* old_lens = lens;
        size_t old_cap = cap;
        cap *= 2;
        keys = calloc(cap, sizeof *keys);
        lens = calloc(cap, sizeof *lens);
        if (!keys || !lens) {
            fprintf(stderr, "qemu_count: out of memory\n");
            exit(1);
        }
        for (size_t i = 0; i < old_cap; ++i)
            if (old_keys[i]) {
                size_t j = slot(old_keys[i]);
                keys[j] = old_keys[i];
                lens[j] = old_lens[i];
            }
        free(old_keys);
        free(old_lens);
    }
    size_t i = slot(pc);
    if (!keys[i]) {
        keys[i] = pc;
        ++used;
    }
    lens[i] = n;
}

static uint32_t get(uint64_t pc) {
    size_t i = slot(pc);
    return keys[i] ? lens[i] : 0;
}

/* One line of the log (without its newline). */
static uint64_t total, block_pc;
static uint32_t block_n;
static int in_block;

static void parse(const char* line, size_t len) {
    if (len > 6 && memcmp(line, "Trace ", 6) == 0) {
        in_block = 0;
        const char* p = memchr(line, '[', len);
        p = p ? memchr(p, '/', len - (size_t)(p - line)) : NULL;
        if (p) total += get(strtoull(p + 1, NULL, 16));
    } else if (len >= 3 && memcmp(line, "IN:", 3) == 0) {
        in_block = 1;
        block_n = 0;
    } else if (in_block && len > 2 && line[0] == '0' && line[1] == 'x' && memchr(line, ':', len)) {
        uint64_t pc = strtoull(line + 2, NULL, 16);
        if (block_n == 0) block_pc = pc;
        put(block_pc, ++block_n);
    } else {
        in_block = 0;
    }
}

int main(int argc, char** argv) {
    if (argc != 2 || argv[1][0] == '\0' || (argv[1][0] == '-' && argv[1][1] != '\0')) {
        fprintf(stderr, "usage: qemu_count LOG   (the log of qemu -d in_asm,exec,nochain; - for standard input)\n");
        return 2;
    }
    int fd = strcmp(argv[1], "-") == 0 ? 0 : open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    keys = calloc(cap, sizeof *keys);
    lens = calloc(cap, sizeof *lens);
    /* qemu writes its log a line at a time (one write each). A reader that waits on a small pipe is
     * woken for every line, and the kernel's wake-ups then cost more than qemu's own work: the pipe is
     * made as large as allowed and read in large pieces, with a short sleep while it fills. */
    fcntl(fd, F_SETPIPE_SZ, 1 << 20);
    enum { kBuf = 4 << 20 };
    char* buf = malloc(kBuf);
    if (!keys || !lens || !buf) {
        fprintf(stderr, "qemu_count: out of memory\n");
        return 1;
    }
    size_t have = 0;
    for (;;) {
        ssize_t got = read(fd, buf + have, kBuf - have);
        if (got < 0) {
            if (errno == EINTR) continue;
            perror(argv[1]);
            return 1;
        }
        if (got == 0) break;
        have += (size_t)got;
        size_t start = 0;
        for (char* nl; (nl = memchr(buf + start, '\n', have - start)) != NULL; start = (size_t)(nl - buf) + 1)
            parse(buf + start, (size_t)(nl - buf) - start);
        if (start == 0 && have == kBuf) {
            fprintf(stderr, "qemu_count: a log line longer than 4 MiB\n");
            return 1;
        }
        memmove(buf, buf + start, have - start);
        have -= start;
        if (got < (1 << 18)) {
            struct timespec nap = {0, 2000000};
            nanosleep(&nap, NULL);
        }
    }
    if (have) parse(buf, have);
    printf("%" PRIu64 "\n", total);
    return 0;
}
