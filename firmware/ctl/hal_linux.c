/* monet-ctl's CSR access: monet_hal_read32/monet_hal_write32 at the generated (bus) addresses, through
 * - tcp:HOST:PORT: Etherbone records over TCP to litex_server (LiteX's RemoteClient convention: the server
 *   sends a line about itself on connect; a read is answered with a record of the values, a write is not);
 * - uio:/dev/uioN: an mmap of the UIO device whose first map is the CSR region (the card's overlay);
 * - mem:ADDRESS: an mmap of /dev/mem at the CSRs' physical address.
 * A transport that fails mid-command ends the program (exit status 3) with what failed. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <generated/csr.h>

#include "monet_hal.h"
#include "hal_linux.h"

#define CSR_SPAN 0x10000u                  /* LiteX's CSR region: 32 blocks of 2 KiB */
#define ANSWER_TIMEOUT_MS 30000            /* litex_server's answer to one read (a sim may be slow) */
#define ETHERBONE_MAGIC 0x4e6f
#define ETHERBONE_HEADER 0x1044            /* version 1, no flags; 32-bit addresses and data */
#define RECORD_BYTE_ENABLE 0x0f

static volatile uint8_t *mapped;           /* uio: and mem: */
static int server = -1;                    /* tcp: */
static char server_name[256];   /* HOST:PORT */

static void fail(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "monet-ctl: ");
    vfprintf(stderr, format, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(3);
}

static void put32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Packet header (magic, version, sizes, padding) and one record header (flags, byte enable, counts). */
static void etherbone_headers(uint8_t *p, uint8_t writes, uint8_t reads) {
    memset(p, 0, 12);
    p[0] = ETHERBONE_MAGIC >> 8; p[1] = ETHERBONE_MAGIC & 0xff;
    p[2] = ETHERBONE_HEADER >> 8; p[3] = ETHERBONE_HEADER & 0xff;
    p[9] = RECORD_BYTE_ENABLE; p[10] = writes; p[11] = reads;
}

static void send_all(const uint8_t *p, size_t n) {
    while (n) {
        ssize_t sent = send(server, p, n, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) fail("litex_server at %s: %s", server_name, sent < 0 ? strerror(errno) : "closed");
        p += sent;
        n -= sent;
    }
}

static void receive_all(uint8_t *p, size_t n) {
    while (n) {
        struct pollfd pfd = {server, POLLIN, 0};
        int ready = poll(&pfd, 1, ANSWER_TIMEOUT_MS);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) fail("litex_server at %s did not answer a read within %d s", server_name,
                             ANSWER_TIMEOUT_MS / 1000);
        ssize_t got = recv(server, p, n, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) fail("litex_server at %s: %s", server_name, got < 0 ? strerror(errno) : "closed the connection");
        p += got;
        n -= got;
    }
}

uint32_t monet_hal_read32(uint32_t addr) {
    if (mapped) return *(volatile uint32_t *)(mapped + (addr - CSR_BASE));
    uint8_t packet[20];
    etherbone_headers(packet, 0, 1);
    put32(packet + 12, 0);      /* base return address */
    put32(packet + 16, addr);
    send_all(packet, sizeof(packet));
    uint8_t answer[20];         /* headers, base address, one value */
    receive_all(answer, 12);
    if (answer[0] != ETHERBONE_MAGIC >> 8 || answer[1] != (ETHERBONE_MAGIC & 0xff) || answer[10] != 1 || answer[11])
        fail("litex_server at %s answered a read of 0x%08x with no Etherbone record of one value", server_name, addr);
    receive_all(answer + 12, 8);
    return get32(answer + 16);
}

void monet_hal_write32(uint32_t addr, uint32_t v) {
    if (mapped) { *(volatile uint32_t *)(mapped + (addr - CSR_BASE)) = v; return; }
    uint8_t packet[20];
    etherbone_headers(packet, 1, 0);
    put32(packet + 12, addr);
    put32(packet + 16, v);
    send_all(packet, sizeof(packet));
}

static int say(char *why, size_t n, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(why, n, format, ap);
    va_end(ap);
    return -1;
}

static int open_tcp(const char *where, char *why, size_t n) {
    char host[128];
    const char *colon = strrchr(where, ':');
    if (!colon || colon == where || (size_t)(colon - where) >= sizeof(host) || !colon[1])
        return say(why, n, "expected tcp:HOST:PORT (litex_server's --bind-ip and --bind-port)");
    memcpy(host, where, colon - where);
    host[colon - where] = 0;
    struct addrinfo hints = {0}, *found;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, colon + 1, &hints, &found);
    if (rc) return say(why, n, "cannot resolve %s port %s: %s", host, colon + 1, gai_strerror(rc));
    for (struct addrinfo *a = found; a && server < 0; a = a->ai_next) {
        server = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (server >= 0 && connect(server, a->ai_addr, a->ai_addrlen)) { close(server); server = -1; }
    }
    freeaddrinfo(found);
    if (server < 0)
        return say(why, n, "nothing listens at %s:%s (is litex_server running there?): %s", host, colon + 1,
                   strerror(errno));
    snprintf(server_name, sizeof(server_name), "%s:%s", host, colon + 1);
    int one = 1;
    setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* litex_server's line about itself (its transport), sent on connect: read and set aside. */
    char info[128];
    struct pollfd pfd = {server, POLLIN, 0};
    if (poll(&pfd, 1, ANSWER_TIMEOUT_MS) <= 0 || recv(server, info, sizeof(info), 0) <= 0)
        return say(why, n, "%s accepted but sent nothing: not litex_server?", server_name);
    return 0;
}

static int map_csrs(const char *device, off_t offset, size_t size, char *why, size_t n) {
    int fd = open(device, O_RDWR | O_SYNC);
    if (fd < 0) return say(why, n, "cannot open %s: %s", device, strerror(errno));
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
    close(fd);
    if (p == MAP_FAILED) return say(why, n, "cannot map %zu bytes of %s: %s", size, device, strerror(errno));
    mapped = p;
    return 0;
}

/* The size of a UIO device's first map, from sysfs. */
static int uio_size(const char *device, size_t *size, char *why, size_t n) {
    const char *name = strrchr(device, '/');
    name = name ? name + 1 : device;
    char path[256];
    snprintf(path, sizeof(path), "/sys/class/uio/%s/maps/map0/size", name);
    FILE *f = fopen(path, "r");
    unsigned long long value = 0;
    int ok = f && fscanf(f, "%llx", &value) == 1 && value;
    if (f) fclose(f);
    if (!ok) return say(why, n, "%s is not a UIO device with a map (no %s)", device, path);
    *size = value;
    return 0;
}

int hal_open(const char *spec, char *why, size_t n) {
    if (!strncmp(spec, "tcp:", 4)) return open_tcp(spec + 4, why, n);
    if (!strncmp(spec, "uio:", 4)) {
        size_t size;
        if (uio_size(spec + 4, &size, why, n)) return -1;
        if (size < CSR_SPAN) return say(why, n, "%s maps %zu bytes, the CSRs take %u", spec + 4, size, CSR_SPAN);
        return map_csrs(spec + 4, 0, size, why, n);
    }
    if (!strncmp(spec, "mem:", 4)) {
        char *end;
        unsigned long long address = strtoull(spec + 4, &end, 0);
        if (!spec[4] || *end || address % 4096)
            return say(why, n, "expected mem:ADDRESS, the CSRs' physical address, page aligned (this SoC's: 0x%lx)",
                       (unsigned long)CSR_BASE);
        return map_csrs("/dev/mem", (off_t)address, CSR_SPAN, why, n);
    }
    return say(why, n, "not a CSR access; expected one of\n        " HAL_SPECS);
}
