/* monet_bridge: a LiteX sim module that carries a stream pad set (the sim SoC's UARTBone: source_* leave the
 * SoC, sink_* enter it, a byte a cycle) to one TCP client on the loopback interface, so that litex_server
 * (`--uart --uart-port socket://127.0.0.1:PORT`) and every tool above it reach the SoC's bus.
 *
 * It listens only when the environment names a port: MONET_SIM_BRIDGE_PORT=N (0: any free port). It prints
 * "monet_bridge: listening on 127.0.0.1:PORT" before the first cycle. It binds 127.0.0.1 only: nothing of the
 * sim is reachable from the network. One client at a time; a second is refused while the first is open. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "error.h"
#include "modules.h"

#define BRIDGE_PORT_ENV "MONET_SIM_BRIDGE_PORT"
#define RING_BYTES 4096   /* bytes from the client not yet taken by the SoC */
#define OUT_BYTES  256    /* bytes from the SoC gathered before one send() */

struct bridge {
    /* pads, seen from the SoC: source_* are its output stream, sink_* its input stream */
    char *out_valid, *out_ready, *out_data;
    char *in_valid, *in_ready, *in_data;
    char *sys_clk;
    int last_clk;
    int client;                      /* the client's socket, -1 when none */
    struct event *client_event;
    struct evconnlistener *listener;
    unsigned char ring[RING_BYTES];  /* client -> SoC */
    unsigned head, count;
    int in_taken;                    /* the SoC takes the presented byte at the coming rising edge */
    int out_pending;                 /* the SoC hands over out_byte at the coming rising edge */
    unsigned char out_byte;
    unsigned char out[OUT_BYTES];    /* SoC -> client */
    unsigned out_count;
};

static struct event_base *event_base_of_sim;

static int bridge_start(void *base) {
    event_base_of_sim = (struct event_base *)base;
    return RC_OK;
}

static void drop_client(struct bridge *b) {
    if (b->client < 0) return;
    event_free(b->client_event);
    close(b->client);
    b->client = -1;
    b->out_count = 0;
}

static void flush_out(struct bridge *b) {
    unsigned sent = 0;
    while (b->client >= 0 && sent < b->out_count) {
        ssize_t n = send(b->client, b->out + sent, b->out_count - sent, MSG_NOSIGNAL);
        if (n > 0) sent += n;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
        else drop_client(b);
    }
    b->out_count = 0;
}

static void on_client_data(evutil_socket_t fd, short what, void *arg) {
    struct bridge *b = (struct bridge *)arg;
    (void)what;
    while (b->count < RING_BYTES) {
        unsigned tail = (b->head + b->count) % RING_BYTES;
        unsigned room = tail >= b->head ? RING_BYTES - tail : b->head - tail;
        if (room > RING_BYTES - b->count) room = RING_BYTES - b->count;
        ssize_t n = recv(fd, b->ring + tail, room, 0);
        if (n > 0) {
            /* Acknowledge now: a client that writes a command in pieces (pyserial's socket://, as
             * litex_server uses it) holds each piece behind the last one's ACK (Nagle), and a delayed ACK
             * would cost 40 ms an access. Linux clears the flag after every receive. */
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
            b->count += n;
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) drop_client(b);
        return;
    }
}

static void on_accept(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *addr, int len,
                      void *arg) {
    struct bridge *b = (struct bridge *)arg;
    (void)listener; (void)addr; (void)len;
    if (b->client >= 0) {   /* one client: the SoC's byte stream cannot be shared */
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    evutil_make_socket_nonblocking(fd);
    b->client = fd;
    b->head = b->count = 0;
    b->client_event = event_new(event_base_of_sim, fd, EV_READ | EV_PERSIST, on_client_data, b);
    event_add(b->client_event, NULL);
}

static int bridge_listen(struct bridge *b, int port) {
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons(port);
    b->listener = evconnlistener_new_bind(event_base_of_sim, on_accept, b, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
                                          1, (struct sockaddr *)&sin, sizeof(sin));
    if (!b->listener) {
        fprintf(stderr, "monet_bridge: cannot listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
        return RC_ERROR;
    }
    socklen_t size = sizeof(sin);
    getsockname(evconnlistener_get_fd(b->listener), (struct sockaddr *)&sin, &size);
    printf("monet_bridge: listening on 127.0.0.1:%d\n", ntohs(sin.sin_port));
    fflush(stdout);
    return RC_OK;
}

static int bridge_new(void **sess, char *args) {
    (void)args;
    struct bridge *b = calloc(1, sizeof(*b));
    if (!b) return RC_NOENMEM;
    b->client = -1;
    *sess = b;
    const char *port = getenv(BRIDGE_PORT_ENV);
    if (!port || !*port) return RC_OK;
    char *end;
    long value = strtol(port, &end, 10);
    if (*end || value < 0 || value > 65535) {
        fprintf(stderr, "monet_bridge: %s=%s is not a TCP port (0 to 65535; 0 picks a free one)\n",
                BRIDGE_PORT_ENV, port);
        return RC_ERROR;
    }
    return bridge_listen(b, (int)value);
}

static void *pad(struct pad_s *pads, const char *name) {
    for (int i = 0; pads[i].name; i++)
        if (!strcmp(pads[i].name, name)) return pads[i].signal;
    return NULL;
}

static int bridge_add_pads(void *sess, struct pad_list_s *list) {
    struct bridge *b = (struct bridge *)sess;
    if (!b || !list) return RC_INVARG;
    if (!strcmp(list->name, "sys_clk")) {
        b->sys_clk = pad(list->pads, "sys_clk");
        return RC_OK;
    }
    b->out_valid = pad(list->pads, "source_valid");
    b->out_ready = pad(list->pads, "source_ready");
    b->out_data  = pad(list->pads, "source_data");
    b->in_valid  = pad(list->pads, "sink_valid");
    b->in_ready  = pad(list->pads, "sink_ready");
    b->in_data   = pad(list->pads, "sink_data");
    if (!b->out_valid || !b->out_ready || !b->out_data || !b->in_valid || !b->in_ready || !b->in_data) {
        fprintf(stderr, "monet_bridge: pad set %s lacks a source_/sink_ valid, ready or data pad\n", list->name);
        return RC_ERROR;
    }
    *b->out_ready = 1;   /* the client side never holds the SoC back: bytes wait in `out` */
    *b->in_valid = 0;
    return RC_OK;
}

/* Handshakes are sampled on the falling edge, where the SoC's ready and valid show what the next rising edge
 * will do, and completed on the rising edge. */
static int bridge_tick(void *sess, uint64_t time_ps) {
    struct bridge *b = (struct bridge *)sess;
    (void)time_ps;
    int clk = *b->sys_clk, rising = clk && !b->last_clk, falling = !clk && b->last_clk;
    b->last_clk = clk;
    if (falling) {
        b->in_taken = *b->in_valid && *b->in_ready;
        b->out_pending = *b->out_valid;
        b->out_byte = *b->out_data;
    } else if (rising) {
        if (b->in_taken) {
            b->head = (b->head + 1) % RING_BYTES;
            b->count--;
            b->in_taken = 0;
        }
        if (b->out_pending) {
            if (b->client >= 0) b->out[b->out_count++] = b->out_byte;   /* no client: the byte is dropped */
            b->out_pending = 0;
        }
        if (b->out_count == OUT_BYTES || (b->out_count && !*b->out_valid)) flush_out(b);
        *b->in_valid = b->count > 0;
        *b->in_data = b->ring[b->head];
    }
    return RC_OK;
}

static int bridge_close(void *sess) {
    struct bridge *b = (struct bridge *)sess;
    drop_client(b);
    if (b->listener) evconnlistener_free(b->listener);
    free(b);
    return RC_OK;
}

static struct ext_module_s bridge_module = {
    "monet_bridge", bridge_start, bridge_new, bridge_add_pads, bridge_close, bridge_tick};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *)) {
    return register_module(&bridge_module);
}
