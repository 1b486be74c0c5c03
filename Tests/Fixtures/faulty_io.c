/*
 * An LD_PRELOAD shim that makes writes to one directory fail, to test what pushtrail
 * does when the disk fills up or fails.
 *
 *   FAULT_DIR=/path/to/store      only files under this directory are affected
 *   FAULT_AFTER_BYTES=N           let N bytes through write calls, then fail every
 *                                 write, and every sync after that
 *   FAULT_AFTER_SYNCS=N           let N syncs through (msync of a map of a file under
 *                                 FAULT_DIR, fsync, fdatasync), then fail every sync
 *   FAULT_NO_GROW=1               ftruncate and fallocate calls that would make a file
 *                                 longer report success and do nothing: pages of a
 *                                 writable map beyond the end then fault (SIGBUS), as
 *                                 pages the disk cannot back do
 *   FAULT_ERRNO=ENOSPC|EIO        the error to report (default ENOSPC)
 *
 * pushtrail writes its store through a writable map, so its pages reach the disk by
 * msync, not by write calls; write calls remain for a new file's first pages.
 * Build: cc -shared -fPIC -o faulty_io.so faulty_io.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long long budget = -1;
static long long syncs = -1;
static int no_grow;
static int fault_errno = ENOSPC;
static const char *fault_dir;

/* Maps of targeted files, so that msync (which takes an address) can be matched. */
static struct { char *start; size_t length; } maps[32];

static void setup(void) {
    static int done;
    if (done) return;
    done = 1;
    fault_dir = getenv("FAULT_DIR");
    const char *after = getenv("FAULT_AFTER_BYTES");
    budget = after ? atoll(after) : -1;
    const char *s = getenv("FAULT_AFTER_SYNCS");
    syncs = s ? atoll(s) : -1;
    no_grow = getenv("FAULT_NO_GROW") != NULL;
    const char *e = getenv("FAULT_ERRNO");
    if (e && strcmp(e, "EIO") == 0) fault_errno = EIO;
}

/* Whether fd is a file under FAULT_DIR. */
static int targeted(int fd) {
    setup();
    if (!fault_dir) return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    return strncmp(path, fault_dir, strlen(fault_dir)) == 0;
}

/* Takes `count` bytes from the budget; 0 when they may be written. */
static int spend(size_t count) {
    if (budget < 0) return 0;
    if (budget == 0) { errno = fault_errno; return -1; }
    budget -= (long long)count;
    if (budget < 0) { budget = 0; errno = fault_errno; return -1; }
    return 0;
}

ssize_t write(int fd, const void *buf, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "write");
    if (targeted(fd) && spend(count) != 0) return -1;
    return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pwrite");
    if (targeted(fd) && spend(count) != 0) return -1;
    return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    return pwrite(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real) real = dlsym(RTLD_NEXT, "writev");
    if (targeted(fd)) {
        size_t total = 0;
        for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
        if (spend(total) != 0) return -1;
    }
    return real(fd, iov, iovcnt);
}

/* 0 when a sync may go through: the byte budget is not spent, nor the sync count. */
static int sync_allowed(void) {
    if (budget == 0) { errno = fault_errno; return -1; }
    if (syncs == 0) { errno = fault_errno; return -1; }
    if (syncs > 0) syncs--;
    return 0;
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fdatasync");
    if (targeted(fd) && sync_allowed() != 0) return -1;
    return real(fd);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fsync");
    if (targeted(fd) && sync_allowed() != 0) return -1;
    return real(fd);
}

static void *map_file(void *(*real)(void *, size_t, int, int, int, off_t),
                      void *addr, size_t length, int prot, int flags, int fd, off_t offset) {
    void *p = real(addr, length, prot, flags, fd, offset);
    if (p != MAP_FAILED && fd >= 0 && targeted(fd)) {
        for (int i = 0; i < 32; i++) {
            if (maps[i].start == NULL) { maps[i].start = p; maps[i].length = length; break; }
        }
    }
    return p;
}

void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset) {
    static void *(*real)(void *, size_t, int, int, int, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "mmap");
    return map_file(real, addr, length, prot, flags, fd, offset);
}

void *mmap64(void *addr, size_t length, int prot, int flags, int fd, off_t offset) {
    static void *(*real)(void *, size_t, int, int, int, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "mmap64");
    return map_file(real, addr, length, prot, flags, fd, offset);
}

int munmap(void *addr, size_t length) {
    static int (*real)(void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "munmap");
    for (int i = 0; i < 32; i++) {
        if (maps[i].start == addr) { maps[i].start = NULL; maps[i].length = 0; }
    }
    return real(addr, length);
}

int msync(void *addr, size_t length, int flags) {
    static int (*real)(void *, size_t, int);
    if (!real) real = dlsym(RTLD_NEXT, "msync");
    setup();
    for (int i = 0; i < 32; i++) {
        char *start = maps[i].start;
        if (start && (char *)addr >= start && (char *)addr < start + maps[i].length) {
            if (sync_allowed() != 0) return -1;
            break;
        }
    }
    return real(addr, length, flags);
}

/* Whether a targeted file would grow past `length` bytes (FAULT_NO_GROW). */
static int refuse_growth(int fd, off_t length) {
    if (!no_grow || !targeted(fd)) return 0;
    struct stat st;
    return fstat(fd, &st) == 0 && length > st.st_size;
}

int ftruncate(int fd, off_t length) {
    static int (*real)(int, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "ftruncate");
    if (refuse_growth(fd, length)) return 0;
    return real(fd, length);
}

int ftruncate64(int fd, off_t length) { return ftruncate(fd, length); }

int posix_fallocate(int fd, off_t offset, off_t length) {
    static int (*real)(int, off_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "posix_fallocate");
    if (refuse_growth(fd, offset + length)) return 0;
    return real(fd, offset, length);
}
