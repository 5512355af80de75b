/*
 * vhci_bridge: runs inside the real-stack guest. Registers a virtual HCI controller with the
 * kernel through /dev/vhci (it becomes hci0) and relays its H4 packets to and from a byte stream
 * (a virtio-serial port whose host side is the Bumble-emulated controller of peripheral.py).
 *
 *   vhci_bridge [PORT]      PORT defaults to /dev/virtio-ports/hgvhci
 *
 * Prints "hciN" on stdout once the controller exists. Exits non-zero (with the reason on stderr)
 * when either side goes away; closing /dev/vhci unregisters the controller again, which is how
 * the harness makes "no adapter" real.
 *
 * Direction kernel -> port: each read() of /dev/vhci returns exactly one H4 packet, so it is
 * forwarded as is. Direction port -> kernel: the stream has no boundaries, so packets are re-framed
 * from their H4 headers; /dev/vhci takes one packet per write().
 *
 * Built by the harness: gcc -O2 -Wall -o vhci_bridge vhci_bridge.c (no libraries).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HCI_VENDOR_PKT 0xff
#define BUFFER_SIZE (70 * 1024)

static int write_fully(int fd, const uint8_t *data, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, data, length);
        if (written < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -1;
        }
        data += written;
        length -= (size_t)written;
    }
    return 0;
}

/* Size of the H4 packet that starts at p (n bytes available): 0 = header incomplete, -1 = not H4. */
static long packet_size(const uint8_t *p, size_t n) {
    if (n == 0) return 0;
    switch (p[0]) {
    case 0x01: return n < 4 ? 0 : 4L + p[3];                                   /* command: op16 len8 */
    case 0x02: return n < 5 ? 0 : 5L + (p[3] | (p[4] << 8));                    /* ACL: handle16 len16 */
    case 0x03: return n < 4 ? 0 : 4L + p[3];                                   /* SCO: handle16 len8 */
    case 0x04: return n < 3 ? 0 : 3L + p[2];                                   /* event: code8 len8 */
    case 0x05: return n < 5 ? 0 : 5L + ((p[3] | (p[4] << 8)) & 0x3fff);         /* ISO: handle16 len14 */
    default: return -1;
    }
}

int main(int argc, char **argv) {
    const char *port_path = argc > 1 ? argv[1] : "/dev/virtio-ports/hgvhci";
    static uint8_t packet[BUFFER_SIZE], stream[BUFFER_SIZE];
    size_t buffered = 0;

    int port = open(port_path, O_RDWR | O_NOCTTY);
    if (port < 0) { fprintf(stderr, "vhci_bridge: cannot open %s: %s\n", port_path, strerror(errno)); return 1; }
    int vhci = open("/dev/vhci", O_RDWR);
    if (vhci < 0) { fprintf(stderr, "vhci_bridge: cannot open /dev/vhci (is hci_vhci loaded?): %s\n", strerror(errno)); return 1; }

    /* Ask for a primary controller. The kernel answers with a vendor packet carrying the index,
     * but it may queue the new controller's first command (HCI Reset) ahead of that answer: forward
     * every packet that arrives first instead of dropping it. */
    const uint8_t create[2] = { HCI_VENDOR_PKT, 0x00 };
    if (write(vhci, create, sizeof create) != (ssize_t)sizeof create) { perror("vhci_bridge: create"); return 1; }
    for (;;) {
        ssize_t n = read(vhci, packet, sizeof packet);
        if (n <= 0) { perror("vhci_bridge: read /dev/vhci"); return 1; }
        if (packet[0] == HCI_VENDOR_PKT && n == 4) {
            printf("hci%u\n", packet[2] | (packet[3] << 8));
            fflush(stdout);
            break;
        }
        if (write_fully(port, packet, (size_t)n) < 0) { perror("vhci_bridge: write port"); return 1; }
    }

    for (;;) {
        struct pollfd fds[2] = { { .fd = vhci, .events = POLLIN }, { .fd = port, .events = POLLIN } };
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            perror("vhci_bridge: poll");
            return 1;
        }
        if (fds[0].revents & POLLIN) {
            ssize_t n = read(vhci, packet, sizeof packet);
            if (n <= 0) { perror("vhci_bridge: read /dev/vhci"); return 1; }
            if (write_fully(port, packet, (size_t)n) < 0) { perror("vhci_bridge: write port"); return 1; }
        }
        if (fds[1].revents & POLLIN) {
            ssize_t n = read(port, stream + buffered, sizeof stream - buffered);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) { fprintf(stderr, "vhci_bridge: %s closed\n", port_path); return 1; }
            buffered += (size_t)n;
            for (;;) {
                long size = packet_size(stream, buffered);
                if (size < 0) { fprintf(stderr, "vhci_bridge: not an H4 packet (type 0x%02x)\n", stream[0]); return 1; }
                if (size == 0 || (size_t)size > buffered) break;
                if (write_fully(vhci, stream, (size_t)size) < 0) { perror("vhci_bridge: write /dev/vhci"); return 1; }
                memmove(stream, stream + size, buffered - (size_t)size);
                buffered -= (size_t)size;
            }
        } else if (fds[1].revents & (POLLHUP | POLLERR)) {
            usleep(10000);   /* the host end is not connected yet: wait instead of spinning */
        }
    }
}
