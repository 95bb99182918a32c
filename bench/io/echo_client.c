/* Load generator for the echo-server benchmarks (bench/io/run): opens CONNECTIONS TCP
 * connections to 127.0.0.1:PORT and plays ping-pong on each (one line out, wait for the
 * echoed line, repeat) until MESSAGES replies arrived in total. Prints the replies per
 * second over the whole exchange. Written in C with epoll so that the client costs far
 * less than the Ruby server it measures.
 *
 *   echo_client PORT CONNECTIONS MESSAGES
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char MSG[] = "hello carmine echo benchmark\n";

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int connect_to(int port) {
    for (int attempt = 0; attempt < 500; attempt++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        close(fd);
        usleep(20000); /* the server is still starting */
    }
    fprintf(stderr, "echo_client: cannot connect to port %d\n", port);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: echo_client PORT CONNECTIONS MESSAGES\n");
        return 2;
    }
    int port = atoi(argv[1]), conns = atoi(argv[2]);
    long total = atol(argv[3]);
    int ep = epoll_create1(0);
    int *fds = calloc(conns, sizeof *fds);
    size_t *pending = calloc(conns, sizeof *pending); /* bytes of the reply still due */
    for (int i = 0; i < conns; i++) {
        fds[i] = connect_to(port);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
        epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
    }
    long sent = 0, received = 0;
    double start = now();
    for (int i = 0; i < conns && sent < total; i++, sent++) {
        if (write(fds[i], MSG, sizeof MSG - 1) < 0) { perror("write"); return 1; }
        pending[i] = sizeof MSG - 1;
    }
    struct epoll_event evs[256];
    char buf[65536];
    while (received < total) {
        int n = epoll_wait(ep, evs, 256, 10000);
        if (n <= 0) {
            fprintf(stderr, "echo_client: no reply for 10 s (%ld of %ld received)\n", received, total);
            return 1;
        }
        for (int k = 0; k < n && received < total; k++) {
            int i = evs[k].data.u32;
            ssize_t r = read(fds[i], buf, sizeof buf);
            if (r <= 0) {
                fprintf(stderr, "echo_client: connection %d closed after %ld replies\n", i, received);
                return 1;
            }
            pending[i] -= (size_t)r < pending[i] ? (size_t)r : pending[i];
            if (pending[i] == 0) {
                received++;
                if (sent < total) {
                    sent++;
                    if (write(fds[i], MSG, sizeof MSG - 1) < 0) { perror("write"); return 1; }
                    pending[i] = sizeof MSG - 1;
                }
            }
        }
    }
    double secs = now() - start;
    printf("%ld messages in %.3f s: %.0f messages/s\n", received, secs, received / secs);
    return 0;
}
