/*
 * An LD_PRELOAD shim that makes writes to one directory fail, to test what pushtrail
 * does when the disk fills up or fails.
 *
 *   FAULT_DIR=/path/to/store      only files under this directory are affected
 *   FAULT_AFTER_BYTES=N           let N bytes through, then fail every write
 *   FAULT_ERRNO=ENOSPC|EIO        the error to report (default ENOSPC)
 *
 * It wraps the calls LMDB writes and syncs with (write, pwrite, writev, fsync,
 * fdatasync). Build: cc -shared -fPIC -o faulty_io.so faulty_io.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long long budget = -1;
static int fault_errno = ENOSPC;
static const char *fault_dir;

static void setup(void) {
    static int done;
    if (done) return;
    done = 1;
    fault_dir = getenv("FAULT_DIR");
    const char *after = getenv("FAULT_AFTER_BYTES");
    budget = after ? atoll(after) : -1;
    const char *e = getenv("FAULT_ERRNO");
    if (e && strcmp(e, "EIO") == 0) fault_errno = EIO;
}

/* Whether fd is a file under FAULT_DIR. */
static int targeted(int fd) {
    setup();
    if (!fault_dir || budget < 0) return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    return strncmp(path, fault_dir, strlen(fault_dir)) == 0;
}

/* Takes `count` bytes from the budget; 0 when they may be written. */
static int spend(size_t count) {
    if (budget <= 0) { errno = fault_errno; return -1; }
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

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fdatasync");
    setup();
    if (targeted(fd) && budget == 0) { errno = fault_errno; return -1; }
    return real(fd);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fsync");
    setup();
    if (targeted(fd) && budget == 0) { errno = fault_errno; return -1; }
    return real(fd);
}
